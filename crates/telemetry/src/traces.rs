//! Spans exported over OTLP/HTTP (protobuf), for `[telemetry]
//! otlp_endpoint`. The gateway's spans carry configured names, ids and
//! outcomes — never message text, tool arguments or secrets.

use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use std::time::Duration;
use tracing_opentelemetry::OpenTelemetrySpanExt;

pub use opentelemetry_sdk::trace::Tracer;

/// How often finished spans are sent.
const EXPORT_EVERY: Duration = Duration::from_secs(2);

/// The exporter; [`Exporter::shutdown`] sends what is left.
pub struct Exporter {
    provider: SdkTracerProvider,
}

/// The OTLP exporter could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the OTLP exporter: {0}")]
pub struct ExporterError(#[source] opentelemetry_otlp::ExporterBuildError);

/// Start exporting to `endpoint` (`http://collector:4318`; spans go to
/// `<endpoint>/v1/traces`) as service `service`; the tracer to hand to
/// [`layer`].
pub fn exporter(endpoint: &str, service: &str) -> Result<(Exporter, Tracer), ExporterError> {
    let span_exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
        .with_timeout(Duration::from_secs(10))
        .build()
        .map_err(ExporterError)?;
    let processor = BatchSpanProcessor::builder(span_exporter)
        .with_batch_config(BatchConfigBuilder::default().with_scheduled_delay(EXPORT_EVERY).build())
        .build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(Resource::builder().with_service_name(service.to_string()).build())
        .build();
    let tracer = provider.tracer("switchboard");
    Ok((Exporter { provider }, tracer))
}

impl Exporter {
    /// Send the spans not sent yet and stop.
    pub fn shutdown(&self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "the trace exporter did not shut down cleanly");
        }
    }
}

/// The `tracing` layer that turns spans into OpenTelemetry spans.
pub fn layer<S>(tracer: Tracer) -> tracing_opentelemetry::OpenTelemetryLayer<S, Tracer>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    tracing_opentelemetry::layer().with_tracer(tracer)
}

/// The trace id of `span` (32 hex digits) while traces are exported.
pub fn trace_id(span: &tracing::Span) -> Option<String> {
    let context = span.context();
    let id = context.span().span_context().trace_id();
    (id != opentelemetry::trace::TraceId::INVALID).then(|| id.to_string())
}

/// Export `span` (made with `parent: None`, for work that outlives the
/// span it was started in) as a child of the current span, so it stays in
/// the same trace without keeping the caller's span open.
pub fn continue_trace(span: &tracing::Span) {
    let _ = span.set_parent(tracing::Span::current().context());
}

/// A tag for session `key` in spans: session keys name chats (a Telegram
/// private chat's id is its person's), so spans carry a salted digest of
/// the key instead — the same for one session within one process (logs
/// and traces line up), meaningless outside it.
pub fn session_tag(key: &str) -> String {
    use std::hash::BuildHasher;
    // SipHash with keys drawn at random once per process.
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> = std::sync::OnceLock::new();
    let h = KEYS
        .get_or_init(std::collections::hash_map::RandomState::new)
        .hash_one(key);
    format!("{:08x}", h >> 32)
}
