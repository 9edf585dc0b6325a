export function postgresBin(): string | undefined
export function startPostgres(opts?: {maxConnections?: number}): Promise<{url: string; port: number; dir: string; stop: () => void}>
export function freePort(): Promise<number>
