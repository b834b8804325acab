//! How an error reads as one line: its causes joined, as `memprof: error:`
//! prints them and as errors about a temporary file are renamed.

/// The error and its causes joined by `: `. Many of memprof's errors
/// already quote their cause; a cause whose text the line already ends
/// with is not repeated.
pub fn joined(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
