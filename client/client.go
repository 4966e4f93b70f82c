package client

// The client is generated from the public API's OpenAPI document; edit the document, not
// client.gen.go, and regenerate. TestGeneratedCodeIsCurrent fails while they disagree.
//
//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../api/openapi.yaml
