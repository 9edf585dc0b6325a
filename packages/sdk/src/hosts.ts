/** Host names of this machine: a refused connection there means nothing is listening, not a network fault. */
export function isLoopbackHost(hostname: string): boolean {
  return /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|::1)$/i.test(hostname)
}
