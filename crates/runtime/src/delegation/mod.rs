//! `delegate`: hand work to a DIFFERENT configured agent (docs/delegation.md).
//!
//! Gates run in a fixed order — delegation policy, pause, reachability,
//! depth, target profile — and every refusal is an exact contract string.
//! A child runs bounded (inside the caller's tool ceiling, budgets and
//! workspace, with no operator) or independent (under its own policy, with
//! its own approval route), in the foreground, in parallel, or in the
//! background as a task row in the control plane.

mod args;
mod child;
mod manage;
mod parallel;
mod run;
mod tool;

pub use tool::DelegateTool;
