// Command pki writes the certificates and keys of a local cluster with kubeadm's own PKI helpers
// (k8s.io/kubernetes/cmd/kubeadm/app/util/pkiutil), in kubeadm's file layout:
//
//	pki init   --dir D --san IP-or-DNS,...  the cluster CA, the API server's serving certificate,
//	                                         its kubelet client certificate and the service-account
//	                                         key pair (sa.key, sa.pub)
//	pki client --dir D --name F --cn CN [--org O,...]
//	                                         a client certificate F.crt/F.key signed by the CA
//	                                         (admin, controller manager, scheduler, each node)
package main

import (
	"crypto"
	"crypto/x509"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	certutil "k8s.io/client-go/util/cert"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	"k8s.io/kubernetes/cmd/kubeadm/app/util/pkiutil"
)

const validity = 10 * 365 * 24 * time.Hour

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pki: "+format+"\n", args...)
	os.Exit(1)
}

func split(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func certConfig(cn string, orgs []string, usages []x509.ExtKeyUsage, alt certutil.AltNames) *pkiutil.CertConfig {
	return &pkiutil.CertConfig{
		Config: certutil.Config{
			CommonName:   cn,
			Organization: orgs,
			AltNames:     alt,
			Usages:       usages,
		},
		NotAfter:            time.Now().Add(validity),
		EncryptionAlgorithm: kubeadmapi.EncryptionAlgorithmECDSAP256,
	}
}

func loadCA(dir string) (*x509.Certificate, crypto.Signer) {
	caCert, caKey, err := pkiutil.TryLoadCertAndKeyFromDisk(dir, "ca")
	if err != nil {
		fail("load the cluster CA from %s: %v", dir, err)
	}
	return caCert, caKey
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: pki init|client [flags]")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", "", "PKI directory")
	sans := fs.String("san", "", "init: the API server's subject alternative names (IPs and DNS names), comma-separated")
	name := fs.String("name", "", "client: file name (without .crt/.key)")
	cn := fs.String("cn", "", "client: common name (the user)")
	org := fs.String("org", "", "client: organizations (the groups), comma-separated")
	_ = fs.Parse(os.Args[2:])
	if *dir == "" {
		fail("--dir is required")
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fail("%v", err)
	}
	switch os.Args[1] {
	case "init":
		caCert, caKey, err := pkiutil.NewCertificateAuthority(certConfig("kubernetes", nil, nil, certutil.AltNames{}))
		if err != nil {
			fail("cluster CA: %v", err)
		}
		if err := pkiutil.WriteCertAndKey(*dir, "ca", caCert, caKey); err != nil {
			fail("%v", err)
		}
		alt := certutil.AltNames{}
		for _, san := range split(*sans) {
			if ip := net.ParseIP(san); ip != nil {
				alt.IPs = append(alt.IPs, ip)
			} else {
				alt.DNSNames = append(alt.DNSNames, san)
			}
		}
		serving, servingKey, err := pkiutil.NewCertAndKey(caCert, caKey,
			certConfig("kube-apiserver", nil, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, alt))
		if err != nil {
			fail("API server certificate: %v", err)
		}
		if err := pkiutil.WriteCertAndKey(*dir, "apiserver", serving, servingKey); err != nil {
			fail("%v", err)
		}
		kubeletClient, kubeletClientKey, err := pkiutil.NewCertAndKey(caCert, caKey,
			certConfig("kube-apiserver-kubelet-client", nil, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, certutil.AltNames{}))
		if err != nil {
			fail("API server kubelet client certificate: %v", err)
		}
		if err := pkiutil.WriteCertAndKey(*dir, "apiserver-kubelet-client", kubeletClient, kubeletClientKey); err != nil {
			fail("%v", err)
		}
		saKey, err := pkiutil.NewPrivateKey(kubeadmapi.EncryptionAlgorithmRSA2048)
		if err != nil {
			fail("service-account key: %v", err)
		}
		if err := pkiutil.WriteKey(*dir, "sa", saKey); err != nil {
			fail("%v", err)
		}
		if err := pkiutil.WritePublicKey(*dir, "sa", saKey.Public()); err != nil {
			fail("%v", err)
		}
	case "client":
		if *name == "" || *cn == "" {
			fail("client: --name and --cn are required")
		}
		caCert, caKey := loadCA(*dir)
		cert, key, err := pkiutil.NewCertAndKey(caCert, caKey,
			certConfig(*cn, split(*org), []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, certutil.AltNames{}))
		if err != nil {
			fail("client certificate %s: %v", *cn, err)
		}
		if err := pkiutil.WriteCertAndKey(*dir, *name, cert, key); err != nil {
			fail("%v", err)
		}
	default:
		fail("unknown command %q: init or client", os.Args[1])
	}
}
