//! The shared TLS settings still verify: a server whose certificate no
//! trusted authority signed is refused before any request is sent, and the
//! same client speaks plain HTTP as before. (The certificate and key here
//! are a test-only self-signed pair for localhost and 127.0.0.1.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

const CERT: &[u8] = include_bytes!("self-signed.crt");
const KEY: &[u8] = include_bytes!("self-signed.key");

/// A TLS server on loopback that answers every request it reads with 200;
/// counts the requests that got through the handshake.
async fn tls_server() -> (String, Arc<AtomicUsize>) {
    let certs = vec![CertificateDer::from_pem_slice(CERT).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(KEY).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let count = count.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut buf = [0u8; 1024];
                if tls.read(&mut buf).await.unwrap_or(0) > 0 {
                    count.fetch_add(1, Ordering::SeqCst);
                    let _ = tls.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").await;
                }
            });
        }
    });
    (format!("https://127.0.0.1:{port}/"), served)
}

#[tokio::test]
async fn an_untrusted_certificate_is_refused_by_every_client() {
    let (url, served) = tls_server().await;
    for client in [
        switchboard_http::client(),
        switchboard_http::client_builder().build().unwrap(),
    ] {
        let err = client
            .get(&url)
            .send()
            .await
            .expect_err("a self-signed certificate must be refused");
        let chain = format!("{err:?}");
        assert!(chain.contains("InvalidCertificate(UnknownIssuer)"), "{chain}");
    }
    assert_eq!(served.load(Ordering::SeqCst), 0, "no request reached the server");
}

#[tokio::test]
async fn plain_http_still_works() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        let _ = tcp.read(&mut buf).await;
        let _ = tcp.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").await;
    });
    let body = switchboard_http::client()
        .get(format!("http://127.0.0.1:{port}/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(body, "ok");
}
