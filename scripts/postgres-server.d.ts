export function postgresBin(): string | undefined
export function startPostgres(opts?: {maxConnections?: number; settings?: string[]; schedule?: 'batch' | 'normal'; inside?: string[]; address?: string}): Promise<{url: string; socketUrl: string; database: (name: string, opts?: {tcp?: boolean}) => string; port: number; dir: string; data: string; schedule: (policy: 'batch' | 'normal') => void; pause: (mode?: 'fast' | 'immediate') => void; resume: () => void; stop: () => void}>
export function freePort(): Promise<number>
export function serverPids(data: string): string[]
