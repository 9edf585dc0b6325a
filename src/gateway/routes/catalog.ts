/** The store catalogue, one implementation for both doors: products and prices, options and variants, files. */
import type {Handlers} from '../app.js'
import {fileHandlers} from './files.js'
import {productHandlers} from './products.js'
import {variantHandlers} from './variants.js'

export const catalogHandlers: Partial<Handlers> = {...productHandlers, ...variantHandlers, ...fileHandlers}
export {catalogSeeder} from '../catalog-seed.js'
