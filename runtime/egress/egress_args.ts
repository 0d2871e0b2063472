/**
 * The Chromium flags that leave a browser's egress proxy listener its only way out.
 *
 * @module
 */

/**
 * Chromium flags that leave the proxy as the only way out: loopback is not bypassed, and
 * WebRTC may not send UDP outside the proxy (which speaks TCP only).
 */
export function egressArgs(port: number, spkiPin?: string): string[] {
  return [
    `--proxy-server=http://127.0.0.1:${port}`,
    "--proxy-bypass-list=<-loopback>",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    // The same for the headless shell, which reads only this switch (the one above is the
    // full browser's): without it a page's STUN goes out over UDP when there is no namespace.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--dns-prefetch-disable",
    // The proxy's authority, trusted by this profile only and by its key alone: no other
    // certificate check is relaxed.
    ...(spkiPin ? [`--ignore-certificate-errors-spki-list=${spkiPin}`] : []),
  ];
}
