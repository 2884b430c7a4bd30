pub mod devices;
pub mod policies;
pub mod sim;
