package http

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"otpgate/internal/httpkit"
	"otpgate/internal/otp"
)

func TestDecodeSend(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		want       sendRequest
		wantDetail string // substring of the 400 detail; "" means success
	}{
		{name: "AllFields", body: `{"phone":"+819012345678","channel":"sms","locale":"ja"}`, want: sendRequest{Phone: "+819012345678", Channel: "sms", Locale: "ja"}},
		{name: "OnlyPhone", body: ` {"phone":"090 1234 5678"} ` + "\n", want: sendRequest{Phone: "090 1234 5678"}},
		{name: "EscapedNames", body: `{"\u0070hone":"1"}`, want: sendRequest{Phone: "1"}},
		{name: "EmptyBody", body: "", wantDetail: "empty"},
		{name: "WhitespaceBody", body: " \n\t", wantDetail: "empty"},
		{name: "UnknownField", body: `{"phone":"1","extra":1}`, wantDetail: `unknown field "extra"`},
		{name: "NameInOtherCase", body: `{"Phone":"1"}`, wantDetail: `unknown field "Phone"`},
		{name: "DuplicateKey", body: `{"phone":"1","phone":"2"}`, wantDetail: `duplicate field "phone"`},
		{name: "DuplicateKeyOtherCase", body: `{"phone":"1","PHONE":"2"}`, wantDetail: `duplicate field "PHONE"`},
		{name: "OtherCaseBeforeTheRealName", body: `{"pHoNe":"1","phone":"2"}`, wantDetail: `unknown field "pHoNe"`},
		{name: "DuplicateKeyByEscape", body: `{"phone":"1","\u0050hone":"2"}`, wantDetail: "duplicate field"},
		// The Kelvin sign (U+212A) and the long s (U+017F) fold to k and s, as encoding/json matches them.
		{name: "DuplicateKeyKelvinSign", body: "{\"phone\":{\"k\":1,\"\u212a\":2}}", wantDetail: "duplicate field"},
		{name: "DuplicateKeyLongS", body: "{\"phone\":{\"s\":1,\"\u017f\":2}}", wantDetail: "duplicate field"},
		{name: "DuplicateKeyInArray", body: `{"phone":[{"a":1},{"a":1,"a":2}]}`, wantDetail: `duplicate field "a"`},
		{name: "SameKeyInSiblingObjectsIsFine", body: `{"phone":[{"a":1},{"a":2}]}`, wantDetail: `field "phone" must be a string`},
		{name: "DuplicateKeyNested", body: `{"phone":{"a":1,"A":2}}`, wantDetail: `duplicate field "A"`},
		{name: "WrongTypeNumber", body: `{"phone":819012345678}`, wantDetail: `field "phone" must be a string`},
		{name: "WrongTypeObject", body: `{"phone":{"a":1}}`, wantDetail: `field "phone" must be a string`},
		{name: "WrongTypeArray", body: `{"locale":["en"]}`, wantDetail: `field "locale" must be a string`},
		{name: "Null", body: `{"phone":null}`, wantDetail: `field "phone" must not be null`},
		{name: "TrailingData", body: `{"phone":"1"} {"phone":"2"}`, wantDetail: "unexpected data after"},
		{name: "TrailingGarbage", body: `{"phone":"1"}x`, wantDetail: "unexpected data after"},
		{name: "TrailingBrace", body: `{"phone":"1"}}`, wantDetail: "unexpected data after"},
		{name: "NotAnObject", body: `["phone"]`, wantDetail: "must be a JSON object"},
		{name: "BareString", body: `"phone"`, wantDetail: "must be a JSON object"},
		{name: "Truncated", body: `{"phone":"1"`, wantDetail: "unexpected end"},
		{name: "MissingColon", body: `{"phone" "1"}`, wantDetail: "malformed JSON"},
		{name: "SingleQuotes", body: `{'phone':'1'}`, wantDetail: "malformed JSON"},
		// Inside a string it is named by its field (TestInvalidTextIsRefused).
		{name: "InvalidUTF8OutsideAString", body: "{\"phone\":\"1\"}\xff", wantDetail: "UTF-8"},
	}
	requests := httpkit.NewDecoder[sendRequest]()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := requests.Decode([]byte(tt.body))
			if tt.wantDetail == "" {
				if err != nil {
					t.Fatalf("got error %v, want none", err)
				}
				if got != tt.want {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
				return
			}
			var re *otp.ErrInvalidRequest
			if !errors.As(err, &re) {
				t.Fatalf("got error %v, want a *otp.ErrInvalidRequest", err)
			}
			if !strings.Contains(re.Detail, tt.wantDetail) {
				t.Errorf("detail: got %q, want it to contain %q", re.Detail, tt.wantDetail)
			}
		})
	}
}

func TestRequestBodyLimits(t *testing.T) {
	v := &stubVerifier{}
	h, _ := newTestServer(t, v, nil)
	phone := `{"phone":"+819012345678","channel":"sms","locale":"`
	exact := phone + strings.Repeat("x", maxBodyBytes-len(phone)-2) + `"}`
	tests := []struct {
		name   string
		path   string
		body   string
		header map[string]string
		status int
		code   string
	}{
		// The stub service takes any locale: the body reaching it shows it was read in full.
		{name: "FourKiBIsReadInFull", path: "/v1/verifications", body: exact, status: 201},
		{name: "OneByteMoreIsTooLarge", path: "/v1/verifications", body: exact + " ", status: 413, code: "request_too_large"},
		{name: "TooLargeCheck", path: "/v1/verifications/check", body: strings.Repeat(" ", maxBodyBytes+1), status: 413, code: "request_too_large"},
		{name: "FormIsUnsupported", path: "/v1/verifications", body: "phone=1", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 415, code: "unsupported_media_type"},
		{name: "TextIsUnsupported", path: "/v1/verifications/check", body: `{}`, header: map[string]string{"Content-Type": "text/plain"}, status: 415, code: "unsupported_media_type"},
		{name: "OtherCharsetIsUnsupported", path: "/v1/verifications", body: `{}`, header: map[string]string{"Content-Type": "application/json; charset=utf-16"}, status: 415, code: "unsupported_media_type"},
		{name: "CharsetUTF8IsFine", path: "/v1/verifications", body: `{"phone":"+819012345678"}`, header: map[string]string{"Content-Type": "application/json; charset=utf-8"}, status: 201},
		{name: "EmptyBody", path: "/v1/verifications/check", body: "", status: 400, code: "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := post(t, h, tt.path, tt.body, tt.header)
			if w.Code != tt.status {
				t.Fatalf("status: got %v, want %v (body %s)", w.Code, tt.status, w.Body)
			}
			if tt.code != "" {
				if got := decodeProblem(t, w).Code; got != tt.code {
					t.Errorf("code: got %v, want %v", got, tt.code)
				}
			}
		})
	}
	t.Run("MissingContentTypeIsUnsupported", func(t *testing.T) {
		r, _ := http.NewRequest(http.MethodPost, "/v1/verifications", strings.NewReader(`{"phone":"1"}`))
		w := serve(h, r)
		if w.Code != 415 {
			t.Errorf("status: got %v, want %v", w.Code, 415)
		}
	})
	if n := len(v.sendCalls()); n != 2 {
		t.Errorf("service sends: got %v, want %v (only the two bodies within the limits)", n, 2)
	}
}

// fuzzSeeds are bodies that exercise every branch of the strict decoder.
func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		`{"phone":"+819012345678","channel":"sms","locale":"ja"}`,
		`{"id":"` + testID + `","code":"123456"}`,
		`{"phone":"1","code":"123456"}`,
		`{"phone":"1","PHONE":"2"}`,
		`{"phone":"1","phone":"1"}`,
		`{"Phone":"1"}`,
		`{"phone":null}`,
		`{"phone":1}`,
		`{"phone":{"a":[1,{"b":2,"B":3}]}}`,
		`{"phone":"1"}{}`,
		`{"phone":"1"`,
		`[]`,
		``,
		"{\"phone\":\"\xff\"}",
		"{\"\u212a\":1,\"k\":2}",
		`{"\u0070hone":"1"}`,
	} {
		f.Add([]byte(s))
	}
}

// checkDecoded holds the properties every strict decode must have: no panic, every
// refusal a *otp.ErrInvalidRequest (a 400, never a 500), and nothing encoding/json refuses is
// accepted; what is accepted survives a round trip.
func checkDecoded[T comparable](t *testing.T, body []byte) {
	requests := httpkit.NewDecoder[T]()
	got, err := requests.Decode(body)
	if err != nil {
		var re *otp.ErrInvalidRequest
		if !errors.As(err, &re) {
			t.Fatalf("got error %T %v, want a *otp.ErrInvalidRequest", err, err)
		}
		return
	}
	var loose T
	if lerr := json.Unmarshal(body, &loose); lerr != nil {
		t.Fatalf("accepted %q, which encoding/json refuses: %v", body, lerr)
	}
	if loose != got {
		t.Fatalf("got %+v, encoding/json read %+v", got, loose)
	}
	again, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	back, err := requests.Decode(again)
	if err != nil || back != got {
		t.Fatalf("round trip: got %+v, %v, want %+v", back, err, got)
	}
}

func FuzzDecodeSend(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte) { checkDecoded[sendRequest](t, body) })
}

func FuzzDecodeCheck(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte) { checkDecoded[checkRequest](t, body) })
}
