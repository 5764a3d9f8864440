"""Wire codecs: one converter per protocol generation (only these modules parse JSON shapes)."""
