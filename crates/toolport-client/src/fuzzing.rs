//! Entry points for the fuzz targets (`fuzz/`) and their corpus replay:
//! not an API.

/// Feeds `data` to the SSE decoder in two chunks split at `split`, and
/// checks it reads what it reads whole.
pub fn sse(data: &[u8]) {
    const LIMIT: usize = 1 << 16;
    let whole = {
        let mut decoder = crate::sse::SseDecoder::new(LIMIT);
        let mut out = Vec::new();
        decoder.feed(data, &mut out).map(|()| out)
    };
    let split = data.first().map_or(0, |b| usize::from(*b)).min(data.len());
    let mut decoder = crate::sse::SseDecoder::new(LIMIT);
    let mut out = Vec::new();
    let chunked = decoder
        .feed(&data[..split], &mut out)
        .and_then(|()| decoder.feed(&data[split..], &mut out))
        .map(|()| out);
    if let (Ok(whole), Ok(chunked)) = (&whole, &chunked) {
        assert_eq!(whole.len(), chunked.len(), "chunking changed the events");
        for (a, b) in whole.iter().zip(chunked) {
            assert!(
                a.data == b.data && a.id == b.id && a.event == b.event,
                "chunking changed an event"
            );
            assert!(a.data.len() <= LIMIT, "an event over the limit was accepted");
        }
    }
}
