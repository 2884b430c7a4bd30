//! Helpers for tests that use the real traces in `../shared` beside the project.

use std::path::PathBuf;

/// The `shared` folder beside the project root.
pub fn shared_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// `../shared/<rel>` if it exists. When it does not, prints why the test is skipped and returns
/// `None`, or panics when `IOSTACK_REQUIRE_SHARED=1` (as CI sets it).
pub fn shared_path(rel: &str) -> Option<PathBuf> {
    let p = shared_dir().join(rel);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("IOSTACK_REQUIRE_SHARED").as_deref() == Ok("1") {
        panic!("{} is missing and IOSTACK_REQUIRE_SHARED=1", p.display());
    }
    eprintln!("skipped: {} is missing (../shared is not beside the project)", p.display());
    None
}

pub mod fuzz;
