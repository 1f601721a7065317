//! Reading what the bot put under its messages: inline keyboards.

use serde_json::Value;

/// The callback data of the button labelled `label` in the first row of
/// `message`'s inline keyboard; panics naming the label when there is none.
pub fn button(message: &Value, label: &str) -> String {
    message["reply_markup"]["inline_keyboard"][0]
        .as_array()
        .unwrap_or_else(|| panic!("no inline keyboard: {message}"))
        .iter()
        .find(|b| b["text"] == label)
        .unwrap_or_else(|| panic!("no {label} button: {message}"))["callback_data"]
        .as_str()
        .unwrap_or_else(|| panic!("the {label} button has no callback data: {message}"))
        .to_string()
}
