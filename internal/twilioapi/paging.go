package twilioapi

import (
	"net/http"
	"net/url"
	"strconv"
)

// Twilio's paging: PageSize (1–1000, default 50) and Page (from 0) select a slice of a
// list, and meta names the URLs of the first, previous and next pages, which the
// helper libraries follow. A short list (Services) is paged by number and takes no
// PageToken; a long one (Attempts) hands out a PageToken for the position its next page
// starts at, and takes back only the tokens it made.
const (
	defaultPageSize = 50
	maxPageSize     = 1000
	// maxPage bounds the page number, so that offsets stay small.
	maxPage = 1_000_000
)

// pageReq is the page a list call asks for.
type pageReq struct{ size, number int }

// offset is the index of the page's first item.
func (p pageReq) offset() int { return p.size * p.number }

// pagingParams are the query parameters of every list.
var pagingParams = []string{"PageSize", "Page"}

// readPage reads PageSize and Page.
func readPage(p *params) pageReq {
	pr := pageReq{size: defaultPageSize}
	if n, ok := p.integer("PageSize", 1, maxPageSize); ok {
		pr.size = n
	}
	if n, ok := p.integer("Page", 0, maxPage); ok {
		pr.number = n
	}
	return pr
}

// meta is Twilio's paging block of a list answer.
type meta struct {
	Page            int     `json:"page"`
	PageSize        int     `json:"page_size"`
	FirstPageURL    string  `json:"first_page_url"`
	PreviousPageURL *string `json:"previous_page_url"`
	URL             string  `json:"url"`
	NextPageURL     *string `json:"next_page_url"`
	Key             string  `json:"key"`
}

// newMeta describes page pr of the list at path (whose other query parameters, the
// filters, are kept in every URL); more says whether a next page has items. A list paged
// by position (token, the next page's PageToken) links forward only: its previous page is
// null but on the first.
func newMeta(r *http.Request, path, key string, pr pageReq, more bool, token string) meta {
	at := func(n int, token string) string {
		q := url.Values{}
		for k, v := range r.URL.Query() {
			if k != "Page" && k != "PageSize" && k != "PageToken" {
				q[k] = v
			}
		}
		q.Set("PageSize", strconv.Itoa(pr.size))
		q.Set("Page", strconv.Itoa(n))
		if token != "" {
			q.Set("PageToken", token)
		}
		return resourceURL(r, path) + "?" + q.Encode()
	}
	m := meta{Page: pr.number, PageSize: pr.size, FirstPageURL: at(0, ""), URL: at(pr.number, r.URL.Query().Get("PageToken")), Key: key}
	if pr.number > 0 && token == "" && !r.URL.Query().Has("PageToken") {
		prev := at(pr.number-1, "")
		m.PreviousPageURL = &prev
	}
	if more {
		next := at(pr.number+1, token)
		m.NextPageURL = &next
	}
	return m
}

// pageOf is the slice of items that page pr holds, and whether items remain after it.
func pageOf[T any](items []T, pr pageReq) ([]T, bool) {
	from := min(pr.offset(), len(items))
	to := min(from+pr.size, len(items))
	return items[from:to], to < len(items)
}

// resourceURL is the URL of a resource of this API, for the url fields and the paging
// links of answers: absolute under OTP_PUBLIC_URL, a path from the listener's root without
// it; never built from the request's Host, which the client writes.
func resourceURL(r *http.Request, path string) string {
	base, _ := r.Context().Value(publicURLKey{}).(string)
	return base + "/v2" + path
}

// publicURLKey carries Deps.PublicURL in a request's context, for resourceURL.
type publicURLKey struct{}
