package agentstream

// LineReaderBuffer returns the size of a LineReader's buffer, for tests of
// its memory bound.
func LineReaderBuffer(lr *LineReader) int { return len(lr.buf) }
