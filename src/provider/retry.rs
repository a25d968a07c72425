//! Retry policy: exponential backoff with jitter, honouring `retry-after`.
