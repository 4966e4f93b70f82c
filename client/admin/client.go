package admin

// The client is generated from the admin API's OpenAPI document; edit the document, not
// client.gen.go, and regenerate. TestGeneratedCodeIsCurrent (in package client) fails
// while they disagree.
//
//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../../api/admin.openapi.yaml
