//! The page shell and small formatting helpers shared by the pages. Markup
//! is written with maud, which escapes every interpolated value.

use maud::{DOCTYPE, Markup, html};

/// The tabs of the console.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tab {
    Runs,
    Approvals,
    Costs,
    People,
    Health,
}

/// Who is looking, for the header.
pub(crate) struct Chrome<'a> {
    pub(crate) user: &'a str,
    pub(crate) csrf: &'a str,
    pub(crate) paused: bool,
    /// May pause and resume spawning.
    pub(crate) operator: bool,
}

/// The document head; pages of a session carry its CSRF token and the
/// script that uses it.
fn head(title: &str, csrf: Option<&str>) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            @if let Some(token) = csrf { meta name="csrf-token" content=(token); }
            title { (title) " · Switchboard console" }
            link rel="stylesheet" href="/console/assets/console.css";
            @if csrf.is_some() { script src="/console/assets/console.js" defer {} }
        }
    }
}

/// A full console page.
pub(crate) fn page(title: &str, tab: Tab, chrome: &Chrome<'_>, body: Markup) -> Markup {
    let tabs = [
        (Tab::Runs, "/console", "Runs"),
        (Tab::Approvals, "/console/approvals", "Approvals"),
        (Tab::Costs, "/console/costs", "Costs"),
        (Tab::People, "/console/people", "People"),
        (Tab::Health, "/console/health", "Health"),
    ];
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title, Some(chrome.csrf)))
            body {
                header.top {
                    span.brand { "Switchboard" }
                    nav {
                        @for (t, href, name) in tabs {
                            a href=(href) class=[(t == tab).then_some("active")] { (name) }
                        }
                    }
                    div.who {
                        @if chrome.paused { span.badge.warn #paused { "spawning paused" } }
                        @if chrome.operator {
                            @if chrome.paused {
                                button.act data-post="/console/spawning" data-body="resume" { "Resume spawning" }
                            } @else {
                                button.act data-post="/console/spawning" data-body="pause" { "Pause spawning" }
                            }
                        }
                        span.user { (chrome.user) }
                        button.act #signout data-post="/console/signout" { "Sign out" }
                    }
                }
                main { (body) }
                div #toast role="status" {}
            }
        }
    }
}

/// A page with one message (sign-in problems).
pub(crate) fn message_page(title: &str, text: &str) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title, None))
            body { main.narrow { h1 { (title) } p { (text) } } }
        }
    }
}

/// The page a sign-in link opens: one button that uses the link.
pub(crate) fn sign_in_page() -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head("Sign in", None))
            body {
                main.narrow {
                    h1 { "Sign in to the operator console" }
                    p { "This link works once and only for the person it was sent to." }
                    form method="post" action="/console/signin" {
                        input #signin-token type="hidden" name="token" value="";
                        button.primary #signin type="submit" { "Sign in" }
                    }
                    noscript { p { "This page needs JavaScript to read the link." } }
                    script src="/console/assets/console.js" defer {}
                }
            }
        }
    }
}

/// `1h 02m`, `3m 05s`, `12s`, `850ms`.
pub(crate) fn elapsed(ms: i64) -> String {
    let ms = ms.max(0);
    let s = ms / 1000;
    match s {
        0 => format!("{ms}ms"),
        1..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// A Unix-ms time as `YYYY-MM-DD HH:MM:SS` UTC.
pub(crate) fn time(ms: i64) -> String {
    crate::human_time::utc(ms)
}

/// Micro-dollars as `$1.2345`.
pub(crate) fn dollars(micros: i64) -> String {
    format!("${}.{:04}", micros / 1_000_000, (micros % 1_000_000).abs() / 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(elapsed(850), "850ms");
        assert_eq!(elapsed(12_400), "12s");
        assert_eq!(elapsed(185_000), "3m 05s");
        assert_eq!(elapsed(3_720_000), "1h 02m");
        assert_eq!(time(0), "1970-01-01 00:00:00");
        assert_eq!(time(86_399_000), "1970-01-01 23:59:59");
        assert_eq!(dollars(1_234_567), "$1.2345");
        assert_eq!(dollars(0), "$0.0000");
    }

    #[test]
    fn interpolated_text_is_escaped() {
        let m = message_page("<b>x</b>", "a & \"b\"").into_string();
        assert!(m.contains("&lt;b&gt;x&lt;/b&gt;"), "{m}");
        assert!(m.contains("a &amp; &quot;b&quot;"), "{m}");
        assert!(!m.contains("<b>x"), "{m}");
    }
}
