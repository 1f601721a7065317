//! Switchboard's configuration: the TOML schema (docs/configuration.md), loading with
//! `env:NAME` secrets, and validation that names the TOML path of every
//! problem so an operator knows exactly which key to change.

mod agent;
mod channels;
mod cluster;
mod cost;
mod cron;
mod env_file;
mod limits;
mod load;
mod mcp;
mod people;
mod problem;
mod provider;
mod risk;
mod root;
mod roster;
mod routes;
mod runtime_profile;
mod sandbox;
mod secret;
mod telemetry;
mod transcription;
mod validate;

pub use agent::{AgentConfig, DelegateEntry, DelegateMode, SubagentTools, SubagentsConfig, WorkspaceConfig};
pub use channels::{ChannelsConfig, DiscordChannel, LocalChannel, MatrixChannel, Streaming, TelegramChannel};
pub use cluster::ClusterConfig;
pub use cost::{CostConfig, Price};
pub use cron::CronJob;
pub use env_file::{EnvLineError, parse as parse_env_file};
pub use limits::{AttachmentsConfig, LimitsConfig, StorageConfig};
pub use load::ConfigError;
pub use mcp::{McpServerConfig, McpStart, listed, tool_pattern_matches};
pub use people::Person;
pub use problem::Problem;
pub use provider::{ProviderConfig, ProviderKind, TextToolCalls, is_local_server};
pub use risk::{ApprovalRoute, AutonomyLevel, DelegationMode, DelegationPolicy, OnNoApprover, RiskProfile};
pub use root::{Config, Lane, LanesConfig, SkillsConfig, WebConfig};
pub use roster::Unreachable;
pub use routes::{Picked, Place, Route, RouteLevel};
pub use runtime_profile::RuntimeProfile;
pub use sandbox::{NetworkAccess, SandboxConfig};
pub use secret::{Secret, SecretError};
pub use switchboard_core::Risk;
pub use switchboard_core::{ChannelKind, ChannelName};
pub use telemetry::TelemetryConfig;
pub use transcription::TranscriptionConfig;
pub use validate::BUILTIN_TOOLS;
