//! Traces exported over OTLP/HTTP to a receiver in the test, decoded with
//! the OpenTelemetry protocol's own definitions (`opentelemetry-proto`): a
//! turn that starts a background delegate whose agent spawns a subagent is
//! one trace, each span under the one that started it, with the model and
//! tool spans present and no message text or secret in any attribute.

mod support;

use axum::body::Bytes;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{Gateway, Sandbox, free_port, team_with_reviewer};
use switchboard_test_support::{ScriptedModel, Step};

/// An OTLP/HTTP trace receiver on loopback; the spans it was sent.
async fn receiver() -> (String, Arc<Mutex<Vec<Span>>>) {
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let kept = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        post(move |body: Bytes| {
            let kept = kept.clone();
            async move {
                let request = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf request");
                for rs in request.resource_spans {
                    for ss in rs.scope_spans {
                        kept.lock().unwrap().extend(ss.spans);
                    }
                }
                ([("content-type", "application/x-protobuf")], Vec::<u8>::new())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, spans)
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|a| a.key == key)
        .map(|a| format!("{:?}", a.value))
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegation_tree_is_one_trace_with_its_model_and_tool_spans() {
    let (endpoint, spans) = receiver().await;
    let (main, reviewer) = (ScriptedModel::start().await, ScriptedModel::start().await);
    let port = free_port();
    let team = team_with_reviewer(&main.url(), &reviewer.url(), port, "")
        .replace("max_retries = 0", "max_retries = 0\napi_key = \"sk-SECRET-4242\"");
    let config = format!("{team}[telemetry]\notlp_endpoint = \"{endpoint}\"\n");
    let sandbox = Sandbox::new(&config);
    let gw = Gateway::start(&sandbox, port, "team").await;
    main.push(Step::tool_call(
        "delegate",
        json!({"agent": "reviewer", "prompt": "deep audit", "background": true}),
    ));
    main.push(Step::text("Started the audit."));
    reviewer.push(Step::tool_call("spawn_subagent", json!({"prompt": "helper work"})).when_last_contains("deep audit"));
    reviewer.push(Step::text("helper done").when_last_contains("helper work"));
    reviewer.push(Step::text("audit done").when_last_contains("helper done"));
    gw.send(
        "team",
        "general",
        "cli:bob",
        "@bot audit with password hunter2",
        true,
        false,
    )
    .await;
    let mut cursor = 0;
    gw.wait_for("team", &mut cursor, 20, |e| {
        e["kind"] == "message" && e["text"].as_str().unwrap_or("").starts_with("Status: ")
    })
    .await;

    // Exported every 2 s: wait for the subagent's span and the turn's.
    let deadline = Instant::now() + Duration::from_secs(20);
    let spans = loop {
        let now = spans.lock().unwrap().clone();
        if !named(&now, "subagent").is_empty()
            && !named(&now, "message").is_empty()
            && !named(&now, "background_run").is_empty()
        {
            break now;
        }
        assert!(
            Instant::now() < deadline,
            "spans so far: {:?}",
            now.iter().map(|s| &s.name).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let message = named(&spans, "message")
        .into_iter()
        .find(|s| s.parent_span_id.is_empty())
        .expect("a root span for the message");
    let trace = &message.trace_id;
    let by_id = |id: &[u8]| spans.iter().find(|s| s.span_id == id);
    // Everything of this message is in its trace.
    let in_trace: Vec<&Span> = spans.iter().filter(|s| &s.trace_id == trace).collect();
    let names: Vec<&str> = in_trace.iter().map(|s| s.name.as_str()).collect();
    for expected in [
        "message",
        "turn",
        "model_request",
        "tool_call",
        "background_run",
        "delegate",
        "subagent",
        "reply",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from the trace: {names:?}"
        );
    }
    // Parent links: the delegate tool call started the background run,
    // which ran the delegate, whose spawn_subagent call ran the subagent.
    let delegate_call = in_trace
        .iter()
        .find(|s| s.name == "tool_call" && attribute(s, "tool").is_some_and(|t| t.contains("\"delegate\"")))
        .expect("the delegate tool call");
    let background = in_trace.iter().find(|s| s.name == "background_run").unwrap();
    assert_eq!(background.parent_span_id, delegate_call.span_id);
    let delegate = in_trace.iter().find(|s| s.name == "delegate").unwrap();
    assert_eq!(delegate.parent_span_id, background.span_id);
    let subagent = in_trace.iter().find(|s| s.name == "subagent").unwrap();
    let spawn_call = by_id(&subagent.parent_span_id).expect("the subagent's parent span");
    assert_eq!(spawn_call.name, "tool_call");
    assert!(attribute(spawn_call, "tool").unwrap().contains("spawn_subagent"));
    // The spawn_subagent call is the delegate's, somewhere under it.
    let mut up = spawn_call;
    while up.span_id != delegate.span_id {
        up = by_id(&up.parent_span_id).expect("a chain of parents up to the delegate");
    }
    // The delegate tool call is the person's turn's.
    let turn_of_call = by_id(&delegate_call.parent_span_id).unwrap();
    assert_eq!(turn_of_call.name, "turn");
    assert_eq!(turn_of_call.parent_span_id, message.span_id);
    // Model calls say who served them and how it went.
    let model = in_trace.iter().find(|s| s.name == "model_request").unwrap();
    assert!(attribute(model, "provider").is_some() && attribute(model, "outcome").unwrap().contains("ok"));
    // No message text, no secret, anywhere in what was exported.
    let everything = format!("{spans:?}");
    for secret in ["hunter2", "sk-SECRET-4242", "audit with password", "local.team:general"] {
        assert!(!everything.contains(secret), "{secret} was exported");
    }
    // Log lines logged within the message carry its trace id.
    let hex: String = trace.iter().map(|b| format!("{b:02x}")).collect();
    let log = gw.log();
    assert!(log.contains("exporting traces over OTLP/HTTP"));
    assert!(
        log.contains(&format!("trace_id={hex}")),
        "no log line with trace_id={hex}:\n{log}"
    );
}
