//! Logging and traces: log lines to stderr under the `DRAGNET_LOG` /
//! `RUST_LOG` filter, and — when `DRAGNET_OTLP_ENDPOINT` names a collector
//! (`http://host:4318`) — the same spans exported over OTLP/HTTP
//! (protobuf) to `<endpoint>/v1/traces`, batched, as service `dragnet`.
//! The exporter is flushed when the command ends. Spans carry ids and
//! names, never a token, a credential or a payload.
//!
//! Log lines are plain text, coloured only when stderr is a terminal and
//! `NO_COLOR` is unset (a file, journald or a container's log never gets
//! escape codes), or one JSON object per line ([`LogFormat::Json`]) for
//! log shippers.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer as _};

use crate::out::say;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines; colour only on a terminal without `NO_COLOR`.
    #[default]
    Text,
    /// One JSON object per line (timestamp, level, target, fields, spans).
    Json,
}

impl LogFormat {
    /// `text` or `json`, as the flag, `DRAGNET_LOG_FORMAT` and the
    /// configuration file's `[log] format` spell it.
    pub fn parse(text: &str) -> Option<LogFormat> {
        match text.trim() {
            "text" => Some(LogFormat::Text),
            "json" => Some(LogFormat::Json),
            _ => None,
        }
    }
}

/// Whether text log lines may carry colour: only to a terminal, and never
/// when `NO_COLOR` is set to anything but the empty string
/// (<https://no-color.org>).
pub fn colour(stderr_is_terminal: bool, no_color: Option<&str>) -> bool {
    stderr_is_terminal && no_color.is_none_or(str::is_empty)
}

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
pub fn init(filter: EnvFilter, format: LogFormat, ansi: bool, otlp: Option<String>) -> Telemetry {
    let provider = otlp.and_then(|endpoint| match provider(&endpoint) {
        Ok(p) => Some(p),
        Err(e) => {
            say(&format!(
                "warning: DRAGNET_OTLP_ENDPOINT=`{endpoint}`: {e}; traces are not exported"
            ));
            None
        }
    });
    let fmt = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_writer(std::io::stderr)
            .with_filter(filter)
            .boxed(),
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("")));
        assert!(!colour(true, Some("1")));
        assert!(!colour(false, None));
        assert_eq!(LogFormat::parse("json"), Some(LogFormat::Json));
        assert_eq!(LogFormat::parse("text"), Some(LogFormat::Text));
        assert_eq!(LogFormat::parse("yaml"), None);
    }
}
