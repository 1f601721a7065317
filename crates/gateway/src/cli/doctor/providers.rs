//! The model providers as `doctor` sees them: the server answers its
//! model list, serves the configured model, and how large a context it
//! has (configured, or learned from a llama.cpp server).

use super::{Row, State, WAIT};
use serde_json::Value;
use switchboard_config::{ProviderConfig, ProviderKind};

pub(super) async fn check(name: &str, p: &ProviderConfig) -> Row {
    let item = format!("{name} ({})", p.model);
    let table = format!("[providers.{name}]");
    let provider = match switchboard_runtime::provider::build_provider(name, p) {
        Ok(x) => x,
        Err(e) => return Row::new("provider", item, State::Fail, e.to_string()),
    };
    let key = match p.api_key.as_ref().map(switchboard_config::Secret::resolve) {
        Some(Err(e)) => return Row::new("provider", item, State::Fail, format!("{e} → set {table}.api_key")),
        Some(Ok(k)) => Some(k),
        None => None,
    };
    let (url, request) = models_request(p, key.as_deref());
    let url = switchboard_mcp::redacted_url(&url);
    let answer = match request.timeout(WAIT).send().await {
        Ok(a) => a,
        Err(e) => {
            let why = if e.is_timeout() {
                "did not answer in time"
            } else {
                "cannot be reached"
            };
            return Row::new(
                "provider",
                item,
                State::Fail,
                format!("{url} {why} → start the model server or fix {table}.base_url"),
            );
        }
    };
    let status = answer.status().as_u16();
    if status == 401 || status == 403 {
        return Row::new(
            "provider",
            item,
            State::Fail,
            format!("{url} refused the credentials (HTTP {status}) → fix {table}.api_key"),
        );
    }
    provider.learn_window().await;
    let window = match provider.limits().window() {
        Some(n) => format!("context window {n} tokens"),
        None => format!(
            "context window unknown (set {table}.context_window to cut long chats before the server refuses them)"
        ),
    };
    if status != 200 {
        return Row::new(
            "provider",
            item,
            State::Warn,
            format!("reachable, but {url} answered HTTP {status}: the model is not confirmed; {window}"),
        );
    }
    let listed: Vec<String> = answer
        .json::<Value>()
        .await
        .ok()
        .and_then(|v| v["data"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect();
    if listed.iter().any(|m| m == &p.model) {
        return Row::new(
            "provider",
            item,
            State::Ok,
            format!("reachable, serves {}; {window}", p.model),
        );
    }
    let some: Vec<&str> = listed.iter().take(5).map(String::as_str).collect();
    Row::new(
        "provider",
        item,
        State::Warn,
        format!(
            "reachable, but {} is not among the models it lists ({}) → check {table}.model; {window}",
            p.model,
            if some.is_empty() {
                "none".to_string()
            } else {
                some.join(", ")
            }
        ),
    )
}

/// The request for the server's model list, with the key as its API wants it.
fn models_request(p: &ProviderConfig, key: Option<&str>) -> (String, reqwest::RequestBuilder) {
    let base = p.base_url();
    match p.kind {
        ProviderKind::Openai => {
            let url = format!("{base}/models");
            let mut r = client().get(&url);
            if let Some(k) = key {
                r = r.bearer_auth(k);
            }
            (url, r)
        }
        ProviderKind::Anthropic => {
            let url = format!("{}/v1/models", base.trim_end_matches("/v1"));
            let mut r = client().get(&url).header("anthropic-version", "2023-06-01");
            if let Some(k) = key {
                r = r.header("x-api-key", k);
            }
            (url, r)
        }
    }
}

/// No redirects: a key is only ever sent to the configured address.
fn client() -> reqwest::Client {
    switchboard_http::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

/// What `agent`'s built-in tools cost in each prompt, against its model's
/// context; a warning past a quarter of it.
pub(super) async fn tool_cost(config: &switchboard_config::Config, agent: &str) -> Row {
    let specs = switchboard_runtime::prompt_size::builtin_specs(config, agent);
    let provider = config
        .agents
        .get(agent)
        .map(|a| a.model_provider.as_str())
        .unwrap_or_default();
    let window = match config
        .providers
        .get(provider)
        .map(|p| switchboard_runtime::provider::build_provider(provider, p))
    {
        Some(Ok(p)) => {
            p.learn_window().await;
            p.limits().window()
        }
        _ => None,
    };
    let cost = switchboard_runtime::prompt_size::ToolCost::of(&specs, window);
    let state = if cost.too_large() { State::Warn } else { State::Ok };
    Row::new("tools", agent, state, format!("built-in: {}", cost.describe()))
}
