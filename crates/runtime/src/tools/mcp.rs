//! Tools of MCP servers (docs/mcp.md): each is a tool like the built-ins,
//! named `<server>.<tool>` for people and the configuration, rated by the
//! risk the operator gave it, gated, counted and cancellable like them.

use super::{BoundTool, Tool, ToolContext, ToolResult};
use crate::policy::Risk;
use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock};
use switchboard_config::RiskProfile;
use switchboard_mcp::{McpServers, ToolInfo};

/// The servers and, per server, its tools bound once for each tool list it
/// announced.
#[derive(Default)]
pub(crate) struct McpTools {
    pub(crate) servers: McpServers,
    bound: Mutex<HashMap<String, Bound>>,
}

/// A server's tool list and its tools bound from it.
type Bound = (Arc<Vec<ToolInfo>>, Vec<BoundTool>);

impl McpTools {
    pub(crate) fn new(servers: McpServers) -> Self {
        Self {
            servers,
            bound: Mutex::default(),
        }
    }

    /// The tools of `servers` that `profile` offers.
    /// Two tools the model would call by one name are never both offered:
    /// the later is left out, and the clash logged naming both (server
    /// names without "__" make that all but impossible; see docs/mcp.md).
    pub(crate) fn offered(&self, servers: &[String], profile: &RiskProfile) -> Vec<BoundTool> {
        let mut out = Vec::new();
        let mut wires: HashMap<&str, &str> = HashMap::new();
        let mut cache = self.bound.lock();
        for name in servers {
            let listed = self.servers.tools(name);
            let entry = cache
                .entry(name.clone())
                .or_insert_with(|| (Arc::default(), Vec::new()));
            if !Arc::ptr_eq(&entry.0, &listed) {
                let bound = listed
                    .iter()
                    .map(|info| {
                        BoundTool::new(Arc::new(McpTool {
                            name: intern(&info.display),
                            info: info.clone(),
                            servers: self.servers.clone(),
                        }))
                    })
                    .collect();
                *entry = (listed, bound);
            }
        }
        for name in servers {
            let Some((listed, bound)) = cache.get(name) else {
                continue;
            };
            for (info, tool) in listed.iter().zip(bound) {
                if !profile.offers_tool(tool.name()) {
                    continue;
                }
                if let Some(first) = wires.get(info.wire.as_str()) {
                    tracing::error!(wire = %info.wire, first = %first, second = %info.display, "two MCP tools have one model-facing name; the second is not offered (rename a server or ask its author)");
                    continue;
                }
                wires.insert(info.wire.as_str(), info.display.as_str());
                out.push(tool.clone());
            }
        }
        out
    }
}

/// Tool names live as long as the process; each distinct one is kept once.
fn intern(name: &str) -> &'static str {
    static NAMES: LazyLock<Mutex<HashSet<&'static str>>> = LazyLock::new(Mutex::default);
    let mut names = NAMES.lock();
    if let Some(n) = names.get(name) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// One tool of one server.
struct McpTool {
    name: &'static str,
    info: ToolInfo,
    servers: McpServers,
}

/// The schema of a tool offered by name only: any object.
fn any_object() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": true})
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &'static str {
        self.name
    }

    fn model_name(&self) -> &str {
        &self.info.wire
    }

    fn description(&self) -> String {
        let server = &self.info.server;
        if self.info.brief {
            format!(
                "{} [MCP server {server}; call it to see its arguments]",
                self.info.one_line()
            )
        } else {
            format!("{} [MCP server {server}]", self.info.description.trim())
        }
    }

    fn parameters(&self) -> Value {
        if self.info.brief {
            any_object()
        } else {
            self.info.schema.clone()
        }
    }

    fn full_spec(&self) -> Option<(String, Value)> {
        self.info.brief.then(|| {
            let server = &self.info.server;
            (
                format!("{} [MCP server {server}]", self.info.description.trim()),
                self.info.schema.clone(),
            )
        })
    }

    fn risk_rated(&self) -> bool {
        true
    }

    fn declared_risk(&self) -> super::ToolRisk {
        super::ToolRisk::Fixed(self.info.risk)
    }

    fn metric_label(&self) -> String {
        format!("mcp:{}", self.info.server)
    }

    fn source(&self) -> String {
        format!("MCP server {}", self.info.server)
    }

    fn effect(&self, _args: &Value) -> Risk {
        self.info.risk
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        if self.info.brief {
            let missing = self.info.missing_required(&args);
            if !missing.is_empty() {
                return ToolResult::fail(format!(
                    "{} needs the arguments {}; call it again with arguments matching this schema: {}",
                    self.info.wire,
                    missing.join(", "),
                    self.info.schema
                ));
            }
        }
        let info = &self.info;
        match self.servers.call(&info.server, &info.name, args, &ctx.cancel).await {
            Err(why) => ToolResult::fail(why.to_string()),
            Ok(out) => {
                let mut text = out.text;
                for (i, image) in out.images.iter().enumerate() {
                    text.push('\n');
                    text.push_str(&super::mcp_images::keep(ctx, info, i, image).await);
                }
                if out.is_error {
                    ToolResult {
                        success: false,
                        output: text,
                        error: Some(format!("{} reported an error", info.display)),
                    }
                } else {
                    ToolResult::ok(text)
                }
            }
        }
    }
}
