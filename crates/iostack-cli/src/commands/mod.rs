pub mod policies;
pub mod sim;
pub mod analyze;
