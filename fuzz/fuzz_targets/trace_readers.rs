//! Fuzz target: see `iostack::testing::fuzz::trace_readers`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| iostack::testing::fuzz::trace_readers(data));
