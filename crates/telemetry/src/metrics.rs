//! The process's Prometheus metrics (OpenMetrics text on `/metrics`).
//!
//! Events are counted where they happen, through the functions below;
//! what the store and the channels know (backlogs, runs, connections,
//! leases) is read when a scraper asks and given to [`render`] as a
//! [`Snapshot`]. Recording costs an atomic add (and a short map lookup
//! for labelled series); [`set_enabled`]`(false)` turns it off entirely.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The content type of [`render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turn recording on or off (`[telemetry] metrics`).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether metrics are recorded and served.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ChannelLabel {
    channel: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusedLabel {
    channel: String,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TurnLabel {
    agent: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProviderLabel {
    provider: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabel {
    provider: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabel {
    provider: String,
    direction: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: String,
    risk: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LayerLabel {
    layer: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunLabel {
    kind: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VersionLabel {
    version: &'static str,
}

type Latency = Family<TurnLabel, Histogram, fn() -> Histogram>;

/// Seconds, 5 ms to about 2 minutes (turns and model requests).
fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.5, 12))
}

/// Seconds, 1 s to about an hour (people deciding approvals).
fn waiting() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.5, 10))
}

struct Metrics {
    registry: Registry,
    taken: Family<ChannelLabel, Counter>,
    refused: Family<RefusedLabel, Counter>,
    answered: Family<ChannelLabel, Counter>,
    turns: Latency,
    requests: Family<RequestLabel, Counter>,
    request_seconds: Family<ProviderLabel, Histogram, fn() -> Histogram>,
    tokens: Family<TokenLabel, Counter>,
    cost: Family<ProviderLabel, Counter<f64, AtomicU64>>,
    tools: Family<ToolLabel, Counter>,
    approvals_requested: Counter,
    approvals_decided: Family<OutcomeLabel, Counter>,
    approval_wait: Histogram,
    refusals: Family<LayerLabel, Counter>,
    inbox_pending: Gauge,
    outbox_queued: Gauge,
    database_up: Gauge,
    runs: Family<RunLabel, Gauge>,
    channel_up: Family<ChannelLabel, Gauge>,
    channel_owned: Family<ChannelLabel, Gauge>,
}

static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

impl Metrics {
    fn new() -> Self {
        let mut r = Registry::with_prefix("switchboard");
        let m = Metrics {
            taken: Family::default(),
            refused: Family::default(),
            answered: Family::default(),
            turns: Family::new_with_constructor(latency),
            requests: Family::default(),
            request_seconds: Family::new_with_constructor(latency),
            tokens: Family::default(),
            cost: Family::default(),
            tools: Family::default(),
            approvals_requested: Counter::default(),
            approvals_decided: Family::default(),
            approval_wait: waiting(),
            refusals: Family::default(),
            inbox_pending: Gauge::default(),
            outbox_queued: Gauge::default(),
            database_up: Gauge::default(),
            runs: Family::default(),
            channel_up: Family::default(),
            channel_owned: Family::default(),
            registry: Registry::default(),
        };
        m.register_events(&mut r);
        m.register_state(&mut r);
        let build: Family<VersionLabel, Gauge> = Family::default();
        build
            .get_or_create(&VersionLabel {
                version: env!("CARGO_PKG_VERSION"),
            })
            .set(1);
        r.register("build_info", "The running version", build);
        Metrics { registry: r, ..m }
    }

    /// What is counted as it happens.
    fn register_events(&self, r: &mut Registry) {
        let m = self;
        r.register(
            "messages_taken",
            "Messages taken into the inbox, by channel",
            m.taken.clone(),
        );
        r.register(
            "messages_refused",
            "Messages not taken (strangers, rate limits, disallowed senders, oversized), by channel",
            m.refused.clone(),
        );
        r.register("messages_answered", "Messages answered, by channel", m.answered.clone());
        r.register(
            "turn_duration_seconds",
            "Time from a turn's start to its answer, by agent and outcome",
            m.turns.clone(),
        );
        r.register(
            "model_requests",
            "Model requests by provider and outcome",
            m.requests.clone(),
        );
        r.register(
            "model_request_duration_seconds",
            "Model request latency by provider",
            m.request_seconds.clone(),
        );
        r.register("model_tokens", "Tokens by provider and direction", m.tokens.clone());
        r.register("cost_usd", "Model spend in US dollars by provider", m.cost.clone());
        r.register(
            "tool_calls",
            "Tool calls by tool, risk class and outcome",
            m.tools.clone(),
        );
        r.register(
            "approvals_requested",
            "Approvals asked of people",
            m.approvals_requested.clone(),
        );
        r.register(
            "approvals_decided",
            "Approvals ended, by outcome (approved, denied, expired, unavailable)",
            m.approvals_decided.clone(),
        );
        r.register(
            "approval_wait_seconds",
            "Time approvals waited for a decision",
            m.approval_wait.clone(),
        );
        r.register(
            "sandbox_refusals",
            "Tool actions refused by the confinement, by layer",
            m.refusals.clone(),
        );
    }

    /// What is read at scrape time.
    fn register_state(&self, r: &mut Registry) {
        let m = self;
        r.register(
            "inbox_pending",
            "Messages taken and not yet answered",
            m.inbox_pending.clone(),
        );
        r.register("outbox_queued", "Replies waiting for delivery", m.outbox_queued.clone());
        r.register(
            "database_up",
            "1 when this instance's last read of the control plane succeeded",
            m.database_up.clone(),
        );
        r.register(
            "runs",
            "Child runs in the control plane by kind and status",
            m.runs.clone(),
        );
        r.register(
            "channel_up",
            "1 when the channel's last contact with its platform succeeded",
            m.channel_up.clone(),
        );
        r.register(
            "channel_owned",
            "1 when this instance runs the channel (holds its lease)",
            m.channel_owned.clone(),
        );
    }
}

fn record(f: impl FnOnce(&Metrics)) {
    if enabled() {
        f(&METRICS);
    }
}

/// A message was taken into the inbox.
pub fn message_taken(channel: &str) {
    record(|m| {
        m.taken
            .get_or_create(&ChannelLabel {
                channel: channel.to_string(),
            })
            .inc();
    });
}

/// A message was not taken; `reason` is a fixed word.
pub fn message_refused(channel: &str, reason: &'static str) {
    record(|m| {
        m.refused
            .get_or_create(&RefusedLabel {
                channel: channel.to_string(),
                reason,
            })
            .inc();
    });
}

/// A taken message was answered.
pub fn message_answered(channel: &str) {
    record(|m| {
        m.answered
            .get_or_create(&ChannelLabel {
                channel: channel.to_string(),
            })
            .inc();
    });
}

/// A person's turn ended (`ok`, `failed` or `stopped`) after `seconds`.
pub fn turn_finished(agent: &str, outcome: &'static str, seconds: f64) {
    record(|m| {
        m.turns
            .get_or_create(&TurnLabel {
                agent: agent.to_string(),
                outcome,
            })
            .observe(seconds);
    });
}

/// A model request to `provider` ended (`ok`, `context_exceeded`, `error`).
pub fn model_request(provider: &str, outcome: &'static str, seconds: f64) {
    record(|m| {
        let provider = provider.to_string();
        m.request_seconds
            .get_or_create(&ProviderLabel {
                provider: provider.clone(),
            })
            .observe(seconds);
        m.requests.get_or_create(&RequestLabel { provider, outcome }).inc();
    });
}

/// Tokens a provider read and wrote, and what they cost (micro-dollars).
pub fn model_usage(provider: &str, input: u64, output: u64, cost_micros: u64) {
    record(|m| {
        for (direction, n) in [("input", input), ("output", output)] {
            m.tokens
                .get_or_create(&TokenLabel {
                    provider: provider.to_string(),
                    direction,
                })
                .inc_by(n);
        }
        if cost_micros > 0 {
            m.cost
                .get_or_create(&ProviderLabel {
                    provider: provider.to_string(),
                })
                .inc_by(cost_micros as f64 / 1e6);
        }
    });
}

/// A tool call ended: `outcome` is `ok`, `error`, `refused` or `denied`.
pub fn tool_call(tool: &str, risk: &'static str, outcome: &'static str) {
    record(|m| {
        m.tools
            .get_or_create(&ToolLabel {
                tool: tool.to_string(),
                risk,
                outcome,
            })
            .inc();
    });
}

/// An approval was asked of people.
pub fn approval_requested() {
    record(|m| {
        m.approvals_requested.inc();
    });
}

/// An approval ended with `outcome` after `seconds` of waiting.
pub fn approval_decided(outcome: &'static str, seconds: f64) {
    record(|m| {
        m.approvals_decided.get_or_create(&OutcomeLabel { outcome }).inc();
        m.approval_wait.observe(seconds);
    });
}

/// The confinement refused a tool action at `layer` (`command`, `path`,
/// `kernel`).
pub fn sandbox_refusal(layer: &'static str) {
    record(|m| {
        m.refusals.get_or_create(&LayerLabel { layer }).inc();
    });
}

/// One channel as a scraper sees it.
#[derive(Debug, Clone)]
pub struct ChannelGauge {
    /// The configured channel name.
    pub name: String,
    /// Its last contact with the platform succeeded.
    pub up: bool,
    /// This instance runs it.
    pub owned: bool,
}

/// What is read at scrape time rather than counted.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Messages taken and not answered.
    pub inbox_pending: i64,
    /// Replies waiting in the outbox.
    pub outbox_queued: i64,
    /// Child runs by (kind, status, count).
    pub runs: Vec<(String, String, i64)>,
    /// The configured channels.
    pub channels: Vec<ChannelGauge>,
    /// Whether this instance's last read of the control plane succeeded
    /// (when not, the control-plane gauges are the last values read).
    pub database_up: bool,
}

/// The OpenMetrics text for a scrape, with `snapshot`'s gauges.
pub fn render(snapshot: &Snapshot) -> String {
    let m = &*METRICS;
    m.inbox_pending.set(snapshot.inbox_pending);
    m.outbox_queued.set(snapshot.outbox_queued);
    m.database_up.set(i64::from(snapshot.database_up));
    m.runs.clear();
    for (kind, status, n) in &snapshot.runs {
        m.runs
            .get_or_create(&RunLabel {
                kind: kind.clone(),
                status: status.clone(),
            })
            .set(*n);
    }
    m.channel_up.clear();
    m.channel_owned.clear();
    for c in &snapshot.channels {
        let label = ChannelLabel {
            channel: c.name.clone(),
        };
        m.channel_up.get_or_create(&label).set(i64::from(c.up));
        m.channel_owned.get_or_create(&label).set(i64::from(c.owned));
    }
    let mut out = String::with_capacity(8192);
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, &m.registry);
    out
}

#[cfg(test)]
mod tests;
