pub mod policies;
pub mod sim;
