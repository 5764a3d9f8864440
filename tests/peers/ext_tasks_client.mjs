// placeholder: replaced by the ext-tasks conformance client
