//! Model Context Protocol tool servers (docs/mcp.md): one supervised client
//! per configured server, over stdio to a kernel-confined child process or
//! over streamable HTTP. The runtime sees tools (`ToolInfo`) and calls
//! (`McpServers::call`); everything protocol-shaped stays in this crate.

mod connect;
mod error;
mod listing;
mod names;
mod output;
mod server;
mod servers;

pub use connect::redacted as redacted_url;
pub use error::McpError;
pub use listing::{FULL_SCHEMAS_UP_TO, ToolInfo};
pub use names::{display_name, wire_name};
pub use output::{CallOutput, ImagePart, MAX_TEXT};
pub use servers::McpServers;
