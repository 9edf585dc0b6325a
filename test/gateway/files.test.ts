import {expect} from 'chai'

import {MAX_FILE_BYTES} from '@payapp/sdk/schemas/catalog'
import {readFileBytes} from '../../src/gateway/domain/files.js'
import {expectError, TestGateway} from '../helpers/gateway.js'

describe('gateway catalogue: file upload', () => {
  let gw: TestGateway
  let acct: Awaited<ReturnType<TestGateway['account']>>
  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account()
  })
  after(() => gw.close())

  function form(bytes: Buffer | string, name = 'photo.png', field = 'file', type = 'image/png') {
    const data = new FormData()
    data.append(field, new Blob([bytes], {type}), name)
    return data
  }

  it('stores a multipart upload and answers 201 with a file object whose path is usable as an image', async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3])
    const res = await acct.app('POST', '/files', {rawBody: form(bytes, 'My Photo (1).png')})
    expect(res.status, res.text).to.equal(201)
    expect(res.body).to.include({object: 'file', livemode: false, size: 7, content_type: 'image/png', filename: 'My Photo (1).png'})
    expect(res.body.id).to.match(/^file_/)
    expect(res.body.path).to.equal(`files/${acct.merchant.id}/test/${res.body.id}/My_Photo_1_.png`)
    expect(await gw.gw.platform.read((tx) => readFileBytes(tx, {merchant: acct.merchant.id, env: 'test'}, res.body.id))).to.deep.equal(bytes)

    const product = await acct.store('POST', '/products', {body: {name: 'Print', images: [res.body.path]}})
    expect(product.status, product.text).to.equal(201)
    const group = await acct.store('POST', `/products/${product.body.id}/options`, {body: {name: 'Size', values: ['A4']}})
    const variant = await acct.store('POST', `/products/${product.body.id}/variants`, {
      body: {options: [{group: group.body.id, value: group.body.values[0].id}], image_path: res.body.path},
    })
    expect(variant.status, variant.text).to.equal(201)
    expect(variant.body.image_path).to.equal(res.body.path)
  })

  it('keeps a path-hostile file name inside its directory', async () => {
    const res = await acct.store('POST', '/files', {rawBody: form('x', '../../etc/.passwd')})
    expect(res.status, res.text).to.equal(201)
    expect(res.body.path).to.match(new RegExp(`^files/${acct.merchant.id}/test/file_[A-Za-z0-9]+/passwd$`))
  })

  it('accepts exactly 5 MB and answers 413 file_too_large above it', async () => {
    const atLimit = await acct.store('POST', '/files', {rawBody: form(Buffer.alloc(MAX_FILE_BYTES, 1), 'big.bin')})
    expect(atLimit.status, atLimit.text).to.equal(201)
    expect(atLimit.body.size).to.equal(MAX_FILE_BYTES)
    const over = await acct.store('POST', '/files', {rawBody: form(Buffer.alloc(MAX_FILE_BYTES + 1, 1), 'bigger.bin')})
    expect(expectError(over, 413, 'file_too_large').param).to.equal('file')
  })

  it('requires the part to be named file and the body to be multipart', async () => {
    expect(expectError(await acct.store('POST', '/files', {rawBody: form('x', 'a.txt', 'upload')}), 400, 'parameter_missing').param).to.equal('file')
    expect(expectError(await acct.store('POST', '/files'), 400, 'parameter_missing').param).to.equal('file')
    expectError(await acct.store('POST', '/files', {body: {file: 'aGVsbG8='}}), 400, 'unsupported_content_type')
    expectError(await acct.store('POST', '/files', {rawBody: form('', 'empty.txt')}), 400, 'file_empty')
  })

  it('wipes test files on a sandbox reset and keeps live ones', async () => {
    const m = await gw.merchant()
    const test = await gw.secretKey(m.id, 'test')
    const live = await gw.secretKey(m.id, 'live')
    const t = await gw.request('POST', '/v1/store/files', {token: test.secret_key, rawBody: form('t')})
    const l = await gw.request('POST', '/v1/store/files', {token: live.secret_key, rawBody: form('l')})
    expect(l.body.livemode).to.equal(true)
    await gw.admin('POST', '/sandbox/reset', {merchant: m.id})
    const platform = gw.gw.platform
    expect(await platform.read((tx) => readFileBytes(tx, {merchant: m.id, env: 'test'}, t.body.id))).to.equal(undefined)
    // The bytes themselves are gone, not just unreachable through the document.
    expect(await platform.storage.reads.blob(t.body.id)).to.equal(undefined)
    expect((await platform.read((tx) => readFileBytes(tx, {merchant: m.id, env: 'live'}, l.body.id)))?.toString()).to.equal('l')
  })
})
