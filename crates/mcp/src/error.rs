//! What a call to, or a probe of, an MCP server can end in.

/// Why an MCP server could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// No enabled server of that name (the name as asked).
    #[error("the MCP server '{0}' is not configured or not enabled")]
    NotConfigured(String),
    /// The server could not be started or reached, or the call failed or
    /// was cancelled: what happened, in words for the person (or model)
    /// who asked, with what the server said.
    #[error("{0}")]
    Failed(String),
}
