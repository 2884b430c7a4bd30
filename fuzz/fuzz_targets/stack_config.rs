//! Fuzz target: see `iostack::testing::fuzz::stack_config`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| iostack::testing::fuzz::stack_config(data));
