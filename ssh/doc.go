// Package ssh implements the Secure Shell protocol (RFC 4251-4254) for tsnmp.
package ssh
