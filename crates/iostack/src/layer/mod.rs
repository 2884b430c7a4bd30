//! Layers between the I/O scheduler and the device (disk-side caches, such as a drive-side
//! variant of REDCAP's RAM segment cache).
//!
//! A layer sees every request the scheduler dispatches, in dispatch order, and answers when it
//! is served: from its own memory, or by passing requests (the same, or others: a segment read,
//! a read-ahead) to the layers and device below through `lower`. The timed engine stacks the
//! configured layers in order, the first one just below the scheduler; with none, dispatched
//! requests go straight to the device. The stack is empty for now. A layer is called inside a
//! dispatch and holds a device queue slot while it answers, so code that must sit above the
//! scheduler (REDCAP as the KDSim paper places it, §4: hits served without the disk, segment
//! reads scheduled like any request) is a block stage instead ([`crate::blk::BlockStage`]).

use crate::device::{Device, DeviceRequest, Service};

/// A disk-side layer.
///
/// Contract: calls come in non-decreasing `now_ns`; the answer obeys the [`Device`] contract
/// (`start_ns >= now_ns`, `finish_ns >= start_ns`); requests passed to `lower` are served in
/// order, one at a time; deterministic.
pub trait Layer: Send {
    /// Name with parameters.
    fn name(&self) -> String;
    /// Serves `req`, handed over at `now_ns`, possibly using `lower`.
    fn service(&mut self, req: &DeviceRequest, now_ns: u64, lower: &mut dyn Device) -> Service;
    /// Parameters, for the echoed configuration.
    fn parameters(&self) -> serde_json::Value;
    /// The layer's own counters (hits, bytes held...), for the report.
    fn counters(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// The layers below some point of the stack and the device, seen as one [`Device`]. Requests
/// that reach the device are recorded in `seen` (with their service) for the device-boundary
/// metrics and probes.
pub struct Below<'a> {
    pub layers: &'a mut [Box<dyn Layer>],
    pub device: &'a mut dyn Device,
    pub seen: &'a mut Vec<(DeviceRequest, Service)>,
}

impl Device for Below<'_> {
    fn name(&self) -> String {
        self.device.name()
    }
    fn service(&mut self, req: &DeviceRequest, now_ns: u64) -> Service {
        match self.layers.split_first_mut() {
            Some((top, rest)) => {
                let mut lower = Below { layers: rest, device: &mut *self.device, seen: &mut *self.seen };
                top.service(req, now_ns, &mut lower)
            }
            None => {
                let s = self.device.service(req, now_ns);
                self.seen.push((*req, s));
                s
            }
        }
    }
    fn parameters(&self) -> serde_json::Value {
        self.device.parameters()
    }
}

/// A device of a type known to the caller, seen as a `dyn Device` (for [`Below`], from code that
/// is generic over its device).
pub struct DeviceRef<'a, D: Device + ?Sized>(pub &'a mut D);

impl<D: Device + ?Sized> Device for DeviceRef<'_, D> {
    fn name(&self) -> String {
        self.0.name()
    }
    fn service(&mut self, req: &DeviceRequest, now_ns: u64) -> Service {
        self.0.service(req, now_ns)
    }
    fn parameters(&self) -> serde_json::Value {
        self.0.parameters()
    }
    fn capacity_sectors(&self) -> Option<u64> {
        self.0.capacity_sectors()
    }
}
