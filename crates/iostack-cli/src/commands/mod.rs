pub mod policies;
pub mod run;
pub mod sim;
pub mod analyze;
