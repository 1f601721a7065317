//! `send_file`: post a file from the workspace into the chat (and thread)
//! the run answers, through the channel's upload API. A file over the
//! channel's limit is refused with what to do instead; a failed upload is
//! told to the model, and the text answer goes out either way.

use super::{ToolContext, ToolResult, builtin_tool};
use crate::files::{human_size, media_type};
use serde::Deserialize;
use switchboard_core::OutboundFile;
use switchboard_sandbox::fs::Access;

pub(crate) struct SendFile;

#[derive(Deserialize)]
struct Args {
    path: String,
    #[serde(default)]
    caption: Option<String>,
}

builtin_tool!(SendFile, "send_file", Args);

impl SendFile {
    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolResult {
        let Some(to) = ctx.scope.origin.clone() else {
            return ToolResult::fail(
                "this run answers no chat (a scheduled job or a detached run), so there is nowhere to send a file; say where the file is instead",
            );
        };
        let Some(poster) = ctx.host.file_poster() else {
            return ToolResult::fail("this gateway cannot post files; say where the file is instead");
        };
        let path = match ctx.in_workspace(&args.path) {
            Ok(p) => p,
            Err(refusal) => return refusal,
        };
        let limit = match poster.limit(&to).await {
            Ok(l) => l,
            Err(why) => return ToolResult::fail(why.to_string()),
        };
        let read = ctx
            .confined(Access::Read, {
                let path = path.clone();
                move || super::file_read::read_capped(&path, limit, true)
            })
            .await;
        let (data, size) = match read {
            Ok(r) => r,
            Err(e) => return ToolResult::fail(format!("cannot read '{}': {e}", args.path)),
        };
        if size > limit || data.len() as u64 > limit {
            return ToolResult::fail(format!(
                "'{}' is {}, over the {} this chat takes; it was not sent. Send a smaller file (compress or split it) or tell the person where it is.",
                args.path,
                human_size(size.max(data.len() as u64)),
                human_size(limit)
            ));
        }
        let name = path
            .file_name()
            .map_or_else(|| "file".to_string(), |n| n.to_string_lossy().into_owned());
        let sent = data.len() as u64;
        let outbound = OutboundFile {
            address: to,
            mime: media_type(&name).to_string(),
            name: name.clone(),
            data,
            caption: args.caption.filter(|c| !c.trim().is_empty()),
        };
        match poster.post(outbound).await {
            Ok(()) => ToolResult::ok(format!("sent {name} ({}) to the chat", human_size(sent))),
            Err(why) => ToolResult::fail(format!(
                "{name} was not sent: {why}. Your text answer still reaches the person; say that the file could not be attached."
            )),
        }
    }
}
