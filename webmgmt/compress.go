package webmgmt

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Compression encoders: one zstd encoder serves concurrent EncodeAll
// calls; gzip writers are pooled.
var (
	zstdEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	gzipPool   = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression); return w }}
)

// contentCoding picks zstd or gzip from Accept-Encoding, or "".
func contentCoding(r *http.Request) string {
	best, bestQ := "", 0.0
	for _, hv := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(hv, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			qv := 1.0
			if k, v, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					qv = x
				}
			}
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "zstd" && name != "gzip" || qv <= 0 {
				continue
			}
			if qv > bestQ || qv == bestQ && name == "zstd" {
				best, bestQ = name, qv
			}
		}
	}
	return best
}

// Compress compresses body with a content coding ("gzip" or "zstd").
func Compress(dst []byte, coding string, body []byte) []byte {
	switch coding {
	case "zstd":
		return zstdEnc.EncodeAll(body, dst)
	case "gzip":
		buf := bytes.NewBuffer(dst)
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(buf)
		zw.Write(body)
		zw.Close()
		gzipPool.Put(zw)
		return buf.Bytes()
	}
	return append(dst, body...)
}

// write sends a complete response body, compressed when the client
// accepts it.
func (h *Handler) write(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Vary", "Accept, Accept-Encoding")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	if coding := contentCoding(r); coding != "" {
		zbuf := bufPool.Get().(*[]byte)
		defer bufPool.Put(zbuf)
		*zbuf = Compress((*zbuf)[:0], coding, body)
		body = *zbuf
		hd.Set("Content-Encoding", coding)
		if coding == "gzip" {
			h.Stats.Gzip.Add(1)
		} else {
			h.Stats.Zstd.Add(1)
		}
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	h.Stats.count(http.StatusOK)
	h.Stats.BytesOut.Add(uint64(len(body)))
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}
