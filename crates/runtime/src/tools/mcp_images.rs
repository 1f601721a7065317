//! Pictures an MCP tool returned are saved in the agent's workspace, like
//! files people send: the model is told where, so `send_file` can post them
//! and a vision agent can be shown them.

use super::ToolContext;
use switchboard_mcp::{ImagePart, ToolInfo};
use switchboard_sandbox::fs::Access;

/// The folder of the workspace pictures from MCP tools go to.
pub(crate) const FOLDER: &str = "mcp-images";

/// Save the `i`th picture of a call of `info` and say where it is.
pub(crate) async fn keep(ctx: &ToolContext, info: &ToolInfo, i: usize, image: &ImagePart) -> String {
    let ext = match image.mime_type.as_str() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => "bin",
    };
    let id = &uuid::Uuid::new_v4().simple().to_string()[..8];
    let relative = format!("{FOLDER}/{}-{id}-{i}.{ext}", info.wire);
    let path = match ctx.in_workspace(&relative) {
        Ok(p) => p,
        Err(refused) => return refused.to_model_text(),
    };
    if let Some(picture) = crate::message::Image::new(&image.bytes) {
        ctx.pictures.lock().push(picture);
    }
    let bytes = image.bytes.clone();
    let saved = ctx
        .confined(Access::ReadWrite, move || {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, &bytes)
        })
        .await;
    match saved {
        Ok(()) => format!("[saved as {relative}]"),
        Err(e) => format!("[the picture could not be saved: {e}]"),
    }
}
