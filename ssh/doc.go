// Package ssh is tsnmp's implementation of the Secure Shell protocol
// (RFC 4251-4254), client and server, built to carry SNMP (RFC 5592: the
// "snmp" subsystem on a session channel).
//
// Layers, bottom up: packetConn (binary packet protocol, ciphers and MACs,
// sequence numbers), transport (version exchange, algorithm negotiation,
// key exchange and re-exchange, strict kex, ext-info), authentication
// (Server.authenticate, Client.authenticate), mux (channels, flow control,
// global requests) and channel (io.ReadWriteCloser).
//
// Algorithms: key exchange mlkem768x25519-sha256 (ML-KEM-768 from
// crypto/mlkem with X25519, the default), curve25519-sha256 (and its libssh alias),
// ecdh-sha2-nistp256, diffie-hellman-group14-sha256 and the session
// resumption methods resume-ticket@tsnmp.dev and resume-server@tsnmp.dev
// (docs/ssh-resumption.md); host keys ssh-ed25519, ecdsa-sha2-nistp256,
// rsa-sha2-256, rsa-sha2-512; ciphers chacha20-poly1305@openssh.com,
// aes128-gcm@openssh.com, aes256-gcm@openssh.com, aes128-ctr, aes192-ctr,
// aes256-ctr; MACs hmac-sha2-256(-etm@openssh.com),
// hmac-sha2-512(-etm@openssh.com) and, only when configured, hmac-sha1.
//
// Server:
//
//	srv, err := ssh.NewServer(&ssh.ServerConfig{
//		HostKeys:           []ssh.Signer{hostKey},
//		AuthorizedKeysFile: func(user string) string { return "/etc/tsnmp/keys/" + user },
//		Subsystems: map[string]ssh.SubsystemHandler{
//			"snmp": func(user string, ch io.ReadWriteCloser) { ... },
//		},
//	})
//	err = srv.Serve(listener)
//
// Client:
//
//	c, err := ssh.Dial(ctx, "tcp", "agent.example:830", &ssh.ClientConfig{
//		User:            "alice",
//		Signers:         []ssh.Signer{key},
//		KnownHostsFiles: []string{os.ExpandEnv("$HOME/.ssh/known_hosts")},
//	})
//	ch, err := c.Subsystem("snmp")
package ssh
