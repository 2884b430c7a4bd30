//! Fuzz target: see `iostack::testing::fuzz::hints`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| iostack::testing::fuzz::hints(data));
