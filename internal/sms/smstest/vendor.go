package smstest

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"time"
)

// e164 is the shape of a number in +E.164, which the vendors' APIs take.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// post sends a callback and returns the status it was answered with.
func post(ctx context.Context, target string, h http.Header, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// wait delays or holds a reply as told; false means nothing more is to be written.
func wait(ctx context.Context, release <-chan struct{}, reply Reply) bool {
	if reply.Hang {
		select {
		case <-ctx.Done():
		case <-release:
		}
		return false
	}
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-ctx.Done():
			return false
		case <-release:
			return false
		}
	}
	return true
}

// isAbsoluteURL reports whether s is an absolute http or https URL.
func isAbsoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
