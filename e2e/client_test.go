package e2e

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"otpgate/api"
	"otpgate/client"
	"otpgate/client/admin"
	"otpgate/internal/apitest"
	"otpgate/internal/testenv"
)

// TestGeneratedClients runs one verification through the clients generated from the
// OpenAPI documents, against a production server, with every exchange checked against
// the documents: send, a wrong code, the code the provider received, a second use of it,
// and the verification's history as the admin API tells it.
func TestGeneratedClients(t *testing.T) {
	p := newProvider(t)
	s := startServer(t, prodEnv(t, testenv.RedisURL(t), testenv.PostgresDSN(t), p, nil))
	ctx := context.Background()
	pub, err := client.NewClientWithResponses(s.API,
		client.WithHTTPClient(&http.Client{Transport: apitest.Transport(t, nil, apitest.Public())}))
	if err != nil {
		t.Fatal(err)
	}
	const phone = "+819011112222"

	spelled := "+81 90-1111-2222"
	sent, err := pub.SendVerificationWithResponse(ctx, &client.SendVerificationParams{}, client.SendRequest{Phone: &spelled},
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("X-Forwarded-For", "203.0.113.7")
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if sent.JSON201 == nil {
		t.Fatalf("send: got %d %s, want 201", sent.StatusCode(), sent.Body)
	}
	v := sent.JSON201
	if v.Phone == nil || *v.Phone != phone || v.Email != nil {
		t.Fatalf("phone: got %v (email %v), want %v", v.Phone, v.Email, phone)
	}

	id := v.Id.String()
	wrong, err := pub.CheckVerificationWithResponse(ctx, &client.CheckVerificationParams{}, client.CheckRequest{Id: &id, Code: "000000"})
	if err != nil {
		t.Fatal(err)
	}
	if wrong.ApplicationproblemJSON422 == nil {
		t.Fatalf("wrong code: got %d %s, want 422", wrong.StatusCode(), wrong.Body)
	}
	invalid, err := wrong.ApplicationproblemJSON422.AsProblemInvalidCode()
	if err != nil || invalid.AttemptsLeft != 4 {
		t.Errorf("wrong code: got attempts_left %v (%v), want 4", invalid.AttemptsLeft, err)
	}

	code := p.LastCode(*v.Phone)
	if code == "" {
		t.Fatalf("the provider received no code for %s", *v.Phone)
	}
	ok, err := pub.CheckVerificationWithResponse(ctx, &client.CheckVerificationParams{}, client.CheckRequest{Phone: v.Phone, Code: code})
	if err != nil {
		t.Fatal(err)
	}
	if ok.JSON200 == nil || ok.JSON200.Status != client.CheckResultStatusApproved || ok.JSON200.Id != v.Id {
		t.Fatalf("right code: got %d %s, want 200 approved for %s", ok.StatusCode(), ok.Body, v.Id)
	}
	again, err := pub.CheckVerificationWithResponse(ctx, &client.CheckVerificationParams{}, client.CheckRequest{Phone: v.Phone, Code: code})
	if err != nil {
		t.Fatal(err)
	}
	if again.ApplicationproblemJSON404 == nil {
		t.Errorf("second use: got %d %s, want 404 not_found", again.StatusCode(), again.Body)
	}

	doc, err := pub.OpenAPIDocumentWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := api.PublicJSON(); !bytes.Equal(doc.Body, want) {
		t.Errorf("GET /openapi.json: got %d bytes, want the embedded document's %d", len(doc.Body), len(want))
	}

	adm, err := admin.NewClientWithResponses(s.Admin,
		admin.WithHTTPClient(&http.Client{Transport: apitest.Transport(t, nil, apitest.Admin())}),
		admin.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+testAdminToken)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	detail, err := adm.GetVerificationWithResponse(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if detail.JSON200 == nil {
		t.Fatalf("admin verification: got %d %s, want 200", detail.StatusCode(), detail.Body)
	}
	if got := detail.JSON200.Verification.Status; got != admin.VerificationStatusApproved {
		t.Errorf("admin verification status: got %v, want approved", got)
	}
	var outcomes []string
	for _, a := range detail.JSON200.Attempts {
		outcomes = append(outcomes, string(a.Outcome))
	}
	if got, want := strings.Join(outcomes, ","), "invalid_code,approved,not_pending"; got != want {
		t.Errorf("admin verification attempts: got %v, want %v", got, want)
	}
}
