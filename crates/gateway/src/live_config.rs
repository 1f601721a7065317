//! The configuration in force, read where it is used: a reload
//! (docs/operations.md) replaces the runtime's, and everything holding a
//! [`LiveConfig`] of it sees the new one at its next use.

use std::sync::Arc;
use switchboard_config::Config;

/// See the module doc; cheap to clone.
#[derive(Clone)]
pub struct LiveConfig(Source);

#[derive(Clone)]
enum Source {
    Fixed(Arc<Config>),
    Runtime(switchboard_runtime::Runtime),
}

impl LiveConfig {
    /// The configuration now.
    pub fn get(&self) -> Arc<Config> {
        match &self.0 {
            Source::Fixed(c) => c.clone(),
            Source::Runtime(r) => r.config(),
        }
    }
}

impl From<Arc<Config>> for LiveConfig {
    /// One configuration for good (embedders, benches, tests).
    fn from(c: Arc<Config>) -> Self {
        Self(Source::Fixed(c))
    }
}

impl From<&switchboard_runtime::Runtime> for LiveConfig {
    /// Whatever `runtime` has in force.
    fn from(r: &switchboard_runtime::Runtime) -> Self {
        Self(Source::Runtime(r.clone()))
    }
}
