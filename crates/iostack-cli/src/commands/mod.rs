pub mod policies;
pub mod run;
pub mod sim;
pub mod analyze;
pub mod convert;
pub mod formats;
pub mod gen;
pub mod demo;
