//! Lossless latency histograms as text: HdrHistogram V2 (deflate-compressed) in base64.
//!
//! This is the `histogram` field of a results file ([`crate::results_file`]). The encoding is
//! HdrHistogram's standard interchange format, so other HdrHistogram implementations
//! can read it, and histograms of several runs (or of several hosts running one
//! benchmark together) can be merged exactly with [`merge`].

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::error::Error;

/// Encodes a histogram as base64 of its V2 deflate serialisation.
pub fn encode(hist: &Histogram<u64>) -> Result<String, Error> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(hist, &mut bytes)
        .map_err(|e| Error::Histogram(format!("cannot serialise histogram: {e:?}")))?;
    Ok(STANDARD.encode(bytes))
}

/// Decodes what [`encode`] produced.
pub fn decode(text: &str) -> Result<Histogram<u64>, Error> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|e| Error::Histogram(format!("histogram is not valid base64: {e}")))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| Error::Histogram(format!("cannot decode histogram: {e:?}")))
}

/// Decodes and adds up several encoded histograms (e.g. the `histogram` fields of
/// several results files). The sum has bmk's usual bounds and grows if needed.
pub fn merge<'a>(encoded: impl IntoIterator<Item = &'a str>) -> Result<Histogram<u64>, Error> {
    let mut total = bmk_engine::latency::new_histogram();
    total.auto(true);
    for text in encoded {
        let h = decode(text)?;
        total
            .add(&h)
            .map_err(|e| Error::Histogram(format!("cannot merge histograms: {e:?}")))?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_merge_are_exact() {
        let mut a = bmk_engine::latency::new_histogram();
        let mut b = bmk_engine::latency::new_histogram();
        let mut all = bmk_engine::latency::new_histogram();
        for i in 1..5000u64 {
            let v = i * i * 37 + 1000;
            if i % 3 == 0 { &mut a } else { &mut b }.record(v).unwrap();
            all.record(v).unwrap();
        }
        let ea = encode(&a).unwrap();
        let eb = encode(&b).unwrap();
        assert_eq!(decode(&ea).unwrap(), a);
        let merged = merge([ea.as_str(), eb.as_str()]).unwrap();
        assert_eq!(merged.len(), all.len());
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(merged.value_at_quantile(q), all.value_at_quantile(q));
        }
        assert_eq!(merged.min(), all.min());
        assert_eq!(merged.max(), all.max());
        assert!(decode("not base64!").is_err());
    }
}
