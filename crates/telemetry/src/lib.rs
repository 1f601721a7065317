//! What the gateway tells monitoring systems (docs/operations.md).
//!
//! [`traces`] exports the process's spans over OTLP/HTTP when an
//! endpoint is configured: one trace per taken message, with its model
//! and tool calls, approval waits and child runs.
//!
//! [`metrics`] holds the process's counters and histograms. Every crate
//! records into it through plain functions (no handle to pass around);
//! labels only ever carry configured names (channels, agents, providers,
//! tools) and fixed words, never chat ids, user ids or free text, so the
//! number of series stays bounded by the configuration.

pub mod metrics;
pub mod traces;
