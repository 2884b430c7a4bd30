//! Device models.
//!
//! A device serves one request at a time: [`Device::service`] is given a request and the time it
//! is handed to the device, and answers when service starts and when it finishes. Models may keep
//! state (head position, rotational phase, the drive's segment cache) and so must be called in
//! time order. Requests are in 512-byte sectors, as a disk sees them.

use crate::trace::Op;

/// Bytes per sector.
pub const SECTOR: u64 = 512;

/// A request as the device sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceRequest {
    pub op: Op,
    pub device: u32,
    /// First sector.
    pub sector: u64,
    /// Length in sectors (at least 1).
    pub sectors: u64,
}

/// When a request was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service {
    /// Service started (at or after the time it was handed over, once the device was free).
    pub start_ns: u64,
    /// Service finished.
    pub finish_ns: u64,
    /// Served from the device's own cache without media access.
    pub cache_hit: bool,
}

/// A storage device model.
///
/// The caller guarantees calls in non-decreasing `now_ns`. An implementation MUST return
/// `start_ns >= now_ns`, `finish_ns >= start_ns`, never start before the previous request
/// finished (one request at a time), and be deterministic.
pub trait Device: Send {
    /// Name with preset, e.g. `hdd:st3400620as`.
    fn name(&self) -> String;
    /// Serves `req`, handed over at `now_ns`.
    fn service(&mut self, req: &DeviceRequest, now_ns: u64) -> Service;
    /// The model's parameters, for the echoed configuration and `iostack devices`.
    fn parameters(&self) -> serde_json::Value;
}
