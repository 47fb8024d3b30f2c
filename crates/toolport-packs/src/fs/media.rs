//! `read_media`: images as image content, audio as audio content. The type
//! comes from the file's first bytes, not its name.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use toolport_protocol::content::ContentBlock;
use toolport_server::{RequestContext, ServerBuilder, ToolError, tool};

use super::error::FsError;
use super::path::PathArgs;
use super::sandbox::read_range;
use super::{Shared, blocking};

/// Image or audio, by signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Media {
    Image(&'static str),
    Audio(&'static str),
}

/// Sniffs the media type of a file from its head.
pub(crate) fn sniff(head: &[u8]) -> Option<Media> {
    let starts = |sig: &[u8]| head.starts_with(sig);
    let riff = |kind: &[u8]| head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == kind;
    Some(if starts(b"\x89PNG\r\n\x1a\n") {
        Media::Image("image/png")
    } else if starts(b"\xff\xd8\xff") {
        Media::Image("image/jpeg")
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        Media::Image("image/gif")
    } else if riff(b"WEBP") {
        Media::Image("image/webp")
    } else if starts(b"BM") && head.len() >= 14 {
        Media::Image("image/bmp")
    } else if riff(b"WAVE") {
        Media::Audio("audio/wav")
    } else if starts(b"ID3") || (head.len() >= 2 && head[0] == 0xff && head[1] & 0xe0 == 0xe0) {
        Media::Audio("audio/mpeg")
    } else if starts(b"OggS") {
        Media::Audio("audio/ogg")
    } else if starts(b"fLaC") {
        Media::Audio("audio/flac")
    } else {
        return None;
    })
}

async fn read_media(shared: Arc<Shared>, cx: RequestContext, args: PathArgs) -> Result<ContentBlock, ToolError> {
    let access = shared.access(&cx).await?;
    let target = shared.sandbox.target(&access, args.root.as_deref(), &args.path)?;
    let cap = shared.limits.max_media_bytes;
    blocking(move || {
        let (mut file, _) = target.open_file_capped(cap, "")?;
        let bytes = read_range(&mut file, 0, cap).map_err(|e| target.fail(e))?;
        let data = STANDARD.encode(&bytes);
        match sniff(&bytes) {
            Some(Media::Image(mime)) => Ok(ContentBlock::image(data, mime)),
            Some(Media::Audio(mime)) => Ok(ContentBlock::audio(data, mime)),
            None => Err(FsError::Invalid(format!(
                "{:?} is not an image (PNG, JPEG, GIF, WebP, BMP) or audio file (WAV, MP3, Ogg, FLAC); use read_file for text",
                target.display()
            ))),
        }
    })
    .await
}

/// Adds `read_media`.
pub(crate) fn install(shared: &Arc<Shared>, builder: ServerBuilder) -> ServerBuilder {
    let s = shared.clone();
    builder.tool(
        tool("read_media")
            .description("Reads an image (PNG, JPEG, GIF, WebP, BMP) or audio file (WAV, MP3, Ogg, FLAC) inside a root and returns it as image or audio content.")
            .read_only()
            .handler(move |cx: RequestContext, args: PathArgs| read_media(s.clone(), cx, args)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_not_names_decide() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some(Media::Image("image/png")));
        assert_eq!(sniff(b"\xff\xd8\xff\xe0"), Some(Media::Image("image/jpeg")));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(Media::Image("image/webp")));
        assert_eq!(sniff(b"RIFF\0\0\0\0WAVEfmt "), Some(Media::Audio("audio/wav")));
        assert_eq!(sniff(b"hello world"), None);
        assert_eq!(sniff(b""), None);
    }
}
