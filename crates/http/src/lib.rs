//! Every HTTP client of the gateway (model providers, channels, MCP
//! servers, transcription) starts from [`client_builder`], which shares
//! one TLS setup: the same verification reqwest does by itself (the
//! system's trusted certificates, through rustls-platform-verifier), but
//! with the certificates read and parsed once per process instead of once
//! per client. A gateway with one Telegram bot and one model built three
//! clients at start and read the certificate folder three times
//! (docs/performance.md).

use std::sync::{Arc, OnceLock};

/// The shared TLS settings, made on first use; `None` when they could not
/// be made, in which case each client makes its own (and reports why).
static TLS: OnceLock<Option<rustls::ClientConfig>> = OnceLock::new();

/// A client builder with the process's shared TLS settings. reqwest's own
/// TLS options (extra root certificates, TLS versions, accepting invalid
/// certificates) are ignored on it; none is used in the project. The
/// system's certificates are read at the first call: a change to them is
/// seen after a restart.
pub fn client_builder() -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder();
    match TLS.get_or_init(shared_tls) {
        Some(config) => builder.tls_backend_preconfigured(config.clone()),
        None => builder,
    }
}

/// A client with reqwest's defaults and the shared TLS settings (in place
/// of `reqwest::Client::new()`).
pub fn client() -> reqwest::Client {
    client_builder().build().unwrap_or_else(|e| {
        tracing::warn!(error = %e, "an HTTP client with the shared TLS settings could not be built");
        reqwest::Client::new()
    })
}

/// Read the system's certificates on a thread of their own now, so that
/// the first client built later finds them ready (reading and parsing them
/// takes ~8 ms, which `run` and `chat` spend opening the store meanwhile).
/// A client built before they are read waits for them, as it would anyway.
pub fn warm_up() {
    if TLS.get().is_none() {
        std::thread::spawn(|| {
            TLS.get_or_init(shared_tls);
        });
    }
}

/// What reqwest builds by itself: its crypto provider, TLS 1.2 and 1.3,
/// the platform's verifier, SNI, no client certificate, and HTTP/2 offered
/// before HTTP/1.1 (reqwest is built with `http2`).
fn shared_tls() -> Option<rustls::ClientConfig> {
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let verifier = match rustls_platform_verifier::Verifier::new(provider.clone()) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "the system's trusted certificates could not be read; each HTTP client will try again");
            return None;
        }
    };
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Some(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_share_one_verifier_and_offer_h2_then_http_1_1() {
        let a = client_builder().build().expect("a client");
        let b = client_builder().build().expect("another client");
        drop((a, b));
        let config = TLS.get().and_then(Option::as_ref).expect("shared settings made once");
        assert_eq!(config.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
        assert!(config.enable_sni);
    }
}
