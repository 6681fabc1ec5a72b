//! Logging and traces: log lines to stderr under the `DRAGNET_LOG` /
//! `RUST_LOG` filter, and — when `DRAGNET_OTLP_ENDPOINT` names a collector
//! (`http://host:4318`) — the same spans exported over OTLP/HTTP
//! (protobuf) to `<endpoint>/v1/traces`, batched, as service `dragnet`.
//! The exporter is flushed when the command ends. Spans carry ids and
//! names, never a token, a credential or a payload.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer as _};

use crate::out::say;

/// What must be flushed at exit.
pub struct Telemetry(Option<SdkTracerProvider>);

impl Telemetry {
    /// Sends the spans still batched; waits a few seconds at most.
    pub fn finish(self) {
        if let Some(provider) = self.0 {
            if let Err(e) = provider.shutdown() {
                say(&format!("warning: flushing traces: {e}"));
            }
        }
    }
}

/// Installs the subscriber: `filter` for log lines, and the OTLP exporter
/// when `otlp` names an endpoint. A bad endpoint is said once; logging
/// goes on without it.
pub fn init(filter: EnvFilter, otlp: Option<String>) -> Telemetry {
    let provider = otlp.and_then(|endpoint| match provider(&endpoint) {
        Ok(p) => Some(p),
        Err(e) => {
            say(&format!(
                "warning: DRAGNET_OTLP_ENDPOINT=`{endpoint}`: {e}; traces are not exported"
            ));
            None
        }
    });
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(filter);
    let otel = provider.as_ref().map(|p| {
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("dragnet"))
            .with_filter(EnvFilter::new("info"))
    });
    tracing_subscriber::registry().with(fmt).with(otel).init();
    Telemetry(provider)
}

fn provider(endpoint: &str) -> Result<SdkTracerProvider, String> {
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return Err("it must start with http:// or https://".into());
    }
    let url = format!("{}/v1/traces", endpoint.trim_end_matches('/'));
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url)
        .build()
        .map_err(|e| e.to_string())?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name("dragnet").build())
        .build())
}
