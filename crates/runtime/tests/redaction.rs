//! Property test: secrets in any of the forms the redactor promises to
//! catch never appear in an approval summary, whatever surrounds them.

use serde_json::{Value, json};
use switchboard_runtime::redact::summarize_args;

/// A small deterministic PRNG (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
    fn token(&mut self, len: usize) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let mut s: String = (0..len)
            .map(|_| ALPHABET[(self.next() % 62) as usize] as char)
            .collect();
        // Make sure the token mixes letters and digits, as real keys do.
        s.replace_range(0..2, "q7");
        s
    }
}

const SECRET_KEYS: &[&str] = &[
    "password",
    "token",
    "api_key",
    "secret",
    "Authorization",
    "db_password",
    "AWS_SECRET_KEY",
    "private_key",
    "auth",
];
const PREFIXES: &[&str] = &["sk-", "ghp_", "xoxb-", "AKIA", "glpat-", "github_pat_", ""];
const FILLER: &[&str] = &[
    "deploy",
    "ls -la",
    "https://example.org/path",
    "note",
    "42",
    "restart nginx",
];

/// One argument object hiding `secret` in one of the promised forms.
fn hide(rng: &mut Rng, secret: &str) -> Value {
    let filler = rng.pick(FILLER);
    match rng.next() % 7 {
        0 => json!({ rng.pick(SECRET_KEYS): secret, "note": filler }),
        1 => json!({"command": format!("curl -H 'Authorization: Bearer {secret}' {filler}")}),
        2 => json!({"command": format!("{filler} --password={secret}")}),
        3 => json!({"url": format!("https://api.example.org/v1?token={secret}&q={filler}")}),
        4 => json!({"nested": {"list": [filler, { rng.pick(SECRET_KEYS): secret }]}}),
        5 => json!({"content": format!("{filler} env:{secret}")}),
        _ => json!({"command": format!("{filler} {secret}")}),
    }
}

#[test]
fn secrets_never_reach_a_prompt() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for case in 0..20_000 {
        let prefix = rng.pick(PREFIXES);
        let len = 32 + (rng.next() % 24) as usize;
        let secret = format!("{prefix}{}", rng.token(len));
        let args = hide(&mut rng, &secret);
        let summary = summarize_args(&args);
        assert!(
            !summary.contains(&secret) && !summary.contains(&secret[prefix.len()..]),
            "case {case}: secret leaked\nargs: {args}\nsummary: {summary}"
        );
    }
}

#[test]
fn short_secrets_under_secret_keys_are_hidden_too() {
    let mut rng = Rng(7);
    for _ in 0..5_000 {
        let len = 6 + (rng.next() % 10) as usize;
        let secret = rng.token(len);
        let key = rng.pick(SECRET_KEYS);
        let summary = summarize_args(&json!({ key: secret }));
        assert!(!summary.contains(&secret), "{key}={secret} leaked: {summary}");
    }
}
